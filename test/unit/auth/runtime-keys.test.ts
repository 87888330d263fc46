import { describe, expect, it } from 'vitest';
import { AuthFailure } from '../../../src/auth/failure.js';
import { RuntimeKeys } from '../../../src/auth/runtime-keys.js';
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

/** Which failure `authenticate` throws, as the client sees it (status, code, message). */
function refusal(run: () => unknown): { status: number; code: string; reason: string; message: string } | 'accepted' {
  try {
    run();
    return 'accepted';
  } catch (err) {
    if (!(err instanceof AuthFailure)) throw err;
    return { status: err.status, code: err.code, reason: err.reason, message: err.message };
  }
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
