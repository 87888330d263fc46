import { describe, expect, it } from 'vitest';
import { RuntimeKeys, storedDefaultProject } from '../../../src/auth/index.js';
import { authRefusal as refusal } from '../../helpers/refusals.js';
import type { ApiKeyRecord } from '../../../src/store/index.js';

const EXPIRES_AT = '2030-01-01T00:00:00.000Z';
const EXPIRES_MS = Date.parse(EXPIRES_AT);
const ROTATED_OUT_AT = '2029-06-01T00:00:00.000Z';
const ROTATED_OUT_MS = Date.parse(ROTATED_OUT_AT);

const record = (changes: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id: 'key-00000000000000aa',
  team: 'team-c',
  projects: ['*'],
  defaultProject: 'default',
  limits: {},
  description: null,
  createdAt: '2029-01-01T00:00:00.000Z',
  expiresAt: EXPIRES_AT,
  disabled: false,
  revokedAt: null,
  ...changes,
});

function keysWith(changes: Partial<ApiKeyRecord> = {}): RuntimeKeys {
  const keys = new RuntimeKeys();
  keys.replaceAll([{ record: record(changes), secrets: [{ sha256: 'current', validUntil: null }, { sha256: 'previous', validUntil: ROTATED_OUT_AT }] }]);
  return keys;
}

/** SPEC 12.1: a key stops at its `expiresAt` instant, a rotated-out secret at the end of its overlap — both inclusive. */
describe('runtime keys at their time boundaries', () => {
  it('serves a key up to the millisecond before expiresAt', () => {
    expect(keysWith().authenticate('current', EXPIRES_MS - 1)?.team).toBe('team-c');
  });

  it('refuses a key exactly at expiresAt with 401 invalid_api_key saying when it expired', () => {
    expect(refusal(() => keysWith().authenticate('current', EXPIRES_MS))).toEqual({
      status: 401,
      code: 'invalid_api_key',
      reason: 'expired',
      message: `This API key expired at ${EXPIRES_AT}.`,
    });
  });

  it('never expires a key without expiresAt', () => {
    expect(keysWith({ expiresAt: null }).authenticate('current', Number.MAX_SAFE_INTEGER)?.team).toBe('team-c');
  });

  it('accepts a rotated-out secret up to the millisecond before its overlap ends, and not at the end', () => {
    const keys = keysWith();
    expect(keys.authenticate('previous', ROTATED_OUT_MS - 1)?.team).toBe('team-c');
    expect(keys.authenticate('previous', ROTATED_OUT_MS)).toBeUndefined();
    expect(keys.authenticate('current', ROTATED_OUT_MS)?.team).toBe('team-c');
  });

  it('says revoked before disabled before expired', () => {
    const past = EXPIRES_MS + 1;
    expect(refusal(() => keysWith({ revokedAt: ROTATED_OUT_AT, disabled: true }).authenticate('current', past))).toMatchObject({ reason: 'revoked', message: 'This API key has been revoked.' });
    expect(refusal(() => keysWith({ disabled: true }).authenticate('current', past))).toMatchObject({ reason: 'disabled', message: 'This API key is disabled.' });
  });
});

/** SPEC 12: what the admin API reads and what a presented secret finds as keys change. */
describe('runtime keys as the store changes them', () => {
  const stored = (id: string, digests: readonly string[], changes: Partial<ApiKeyRecord> = {}) => ({
    record: record({ id, ...changes }),
    secrets: digests.map((sha256) => ({ sha256, validUntil: null })),
  });

  it('forgets a rotated-out secret once the key is stored without it, and a deleted key entirely', () => {
    const keys = new RuntimeKeys();
    keys.replaceAll([stored('key-a', ['old', 'mid']), stored('key-b', ['b'])]);
    keys.apply('key-a', stored('key-a', ['mid', 'new']));
    expect(keys.authenticate('old', 0)).toBeUndefined();
    expect(keys.authenticate('mid', 0)?.id).toBe('key-a');
    expect(keys.authenticate('new', 0)?.id).toBe('key-a');
    keys.apply('key-a', undefined);
    expect(keys.authenticate('new', 0)).toBeUndefined();
    expect(keys.record('key-a')).toBeUndefined();
    expect(keys.size).toBe(1);
    expect(keys.authenticate('b', 0)?.id).toBe('key-b');
  });

  it('replaces everything with a full load: keys missing from it stop working', () => {
    const keys = new RuntimeKeys();
    keys.replaceAll([stored('key-a', ['a']), stored('key-b', ['b'])]);
    expect(keys.size).toBe(2);
    keys.replaceAll([stored('key-b', ['b'])]);
    expect(keys.authenticate('a', 0)).toBeUndefined();
    expect(keys.record('key-a')).toBeUndefined();
    expect(keys.size).toBe(1);
    expect(keys.records().map((r) => r.id)).toEqual(['key-b']);
  });

  it('shows live keys only to the admin API reads (a revoked key is held but not listed)', () => {
    const keys = new RuntimeKeys();
    keys.replaceAll([stored('key-a', ['a']), stored('key-r', ['r'], { revokedAt: ROTATED_OUT_AT }), stored('key-d', ['d'], { disabled: true })]);
    expect(keys.records().map((r) => r.id)).toEqual(['key-a', 'key-d']);
    expect(keys.record('key-a')?.id).toBe('key-a');
    expect(keys.record('key-r')).toBeUndefined();
    expect(keys.record('key-d')?.disabled).toBe(true);
    expect(keys.record('key-zz')).toBeUndefined();
    expect(keys.size).toBe(3);
  });

  it('runs as the stored team, projects and limits, with a new principal object per change', () => {
    const keys = new RuntimeKeys();
    keys.replaceAll([stored('key-a', ['a'], { team: 'team-q', projects: ['rl', 'eval'], defaultProject: 'eval', limits: { rpm: 9 } })]);
    const first = keys.authenticate('a', 0);
    expect(first).toEqual({ kind: 'key', id: 'key-a', team: 'team-q', projects: new Set(['rl', 'eval']), defaultProject: 'eval', limits: { rpm: 9 } });
    keys.apply('key-a', stored('key-a', ['a'], { team: 'team-q', projects: ['rl'], defaultProject: 'rl', limits: { rpm: 9 } }));
    const second = keys.authenticate('a', 0);
    expect(second).not.toBe(first);
    expect(second?.projects).toEqual(new Set(['rl']));
  });

  it('runs a key stored with a default outside its projects as "default" if it may use it, else its first project', () => {
    expect(storedDefaultProject({ projects: ['prod', 'rl'], defaultProject: 'default' })).toBe('prod');
    expect(storedDefaultProject({ projects: ['*'], defaultProject: 'default' })).toBe('default');
    expect(storedDefaultProject({ projects: ['prod', 'rl'], defaultProject: 'rl' })).toBe('rl');
    expect(storedDefaultProject({ projects: ['prod', 'default'], defaultProject: 'eval' })).toBe('default');
    expect(storedDefaultProject({ projects: [], defaultProject: 'eval' })).toBe('eval');
  });
});
