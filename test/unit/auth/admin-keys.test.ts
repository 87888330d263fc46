import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeAdminKeys } from '../../../src/auth/index.js';
import { AdminKeyAdmin, syncAdminKeys } from '../../../src/admin-keys/index.js';
import type { AdminKeyConfig } from '../../../src/config/index.js';
import { type AdminKeyRecord, silentLogger, StoreHandle, type StoreMirror } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { expectRotationOverlap } from '../../helpers/key-rotation.js';
import { authRefusal as refusal, gatewayRejection as rejection, UNAVAILABLE_FOR_CHANGE } from '../../helpers/refusals.js';
import { digest } from '../../helpers/keys.js';

const EXPIRES_AT = '2030-01-01T00:00:00.000Z';
const EXPIRES_MS = Date.parse(EXPIRES_AT);
const ROTATED_OUT_AT = '2029-06-01T00:00:00.000Z';
const ROTATED_OUT_MS = Date.parse(ROTATED_OUT_AT);

const record = (changes: Partial<AdminKeyRecord> = {}): AdminKeyRecord => ({
  id: 'adm-00000000000000aa',
  role: 'viewer',
  team: null,
  description: null,
  createdAt: '2029-01-01T00:00:00.000Z',
  expiresAt: EXPIRES_AT,
  disabled: false,
  revokedAt: null,
  ...changes,
});

function keysWith(changes: Partial<AdminKeyRecord> = {}): RuntimeAdminKeys {
  const keys = new RuntimeAdminKeys();
  keys.replaceAll([{ record: record(changes), secrets: [{ sha256: 'current', validUntil: null }, { sha256: 'previous', validUntil: ROTATED_OUT_AT }] }]);
  return keys;
}

/** SPEC 16: a runtime admin key stops at its `expiresAt`, a rotated-out secret at its overlap's end — both inclusive. */
describe('runtime admin keys in memory', () => {
  it('serves a key up to the millisecond before expiresAt, and refuses it at expiresAt saying when it expired', () => {
    expect(keysWith().authenticate('current', EXPIRES_MS - 1)?.id).toBe('adm-00000000000000aa');
    expect(refusal(() => keysWith().authenticate('current', EXPIRES_MS))).toEqual({
      status: 401,
      code: 'invalid_api_key',
      reason: 'expired',
      message: `This admin key expired at ${EXPIRES_AT}.`,
    });
  });

  it('never expires a key without expiresAt', () => {
    expect(keysWith({ expiresAt: null }).authenticate('current', Number.MAX_SAFE_INTEGER)?.id).toBe('adm-00000000000000aa');
  });

  it('accepts a rotated-out secret up to the millisecond before its overlap ends, and not at the end', () => {
    const keys = keysWith();
    expect(keys.authenticate('previous', ROTATED_OUT_MS - 1)?.id).toBe('adm-00000000000000aa');
    expect(keys.authenticate('previous', ROTATED_OUT_MS)).toBeUndefined();
    expect(keys.authenticate('current', ROTATED_OUT_MS)?.id).toBe('adm-00000000000000aa');
    expect(keys.authenticate('unknown', ROTATED_OUT_MS - 1)).toBeUndefined();
  });

  it('says revoked before disabled before expired, each with its message', () => {
    const now = EXPIRES_MS;
    expect(refusal(() => keysWith({ revokedAt: ROTATED_OUT_AT, disabled: true }).authenticate('current', now))).toEqual({
      status: 401,
      code: 'invalid_api_key',
      reason: 'revoked',
      message: 'This admin key has been revoked.',
    });
    expect(refusal(() => keysWith({ disabled: true }).authenticate('current', now))).toEqual({
      status: 401,
      code: 'invalid_api_key',
      reason: 'disabled',
      message: 'This admin key is disabled.',
    });
    expect(refusal(() => keysWith({ disabled: true }).authenticate('current', now - 1))).toMatchObject({ reason: 'disabled' });
    expect(refusal(() => keysWith({ revokedAt: ROTATED_OUT_AT }).authenticate('current', now - 1))).toMatchObject({ reason: 'revoked' });
  });

  it('lists and finds live keys only: a revoked key is held (to say "revoked") but not shown', () => {
    const keys = new RuntimeAdminKeys();
    keys.replaceAll([
      { record: record({ id: 'adm-live' }), secrets: [{ sha256: 'live', validUntil: null }] },
      { record: record({ id: 'adm-gone', revokedAt: ROTATED_OUT_AT }), secrets: [{ sha256: 'gone', validUntil: null }] },
    ]);
    expect(keys.records().map((r) => r.id)).toEqual(['adm-live']);
    expect(keys.record('adm-live')?.id).toBe('adm-live');
    expect(keys.record('adm-gone')).toBeUndefined();
    expect(keys.record('adm-never')).toBeUndefined();
    expect(refusal(() => keys.authenticate('gone', 0))).toMatchObject({ reason: 'revoked' });
  });

  it('replaces everything with a full load: keys missing from it stop working and are no longer listed', () => {
    const keys = keysWith();
    keys.replaceAll([{ record: record({ id: 'adm-other' }), secrets: [{ sha256: 'other', validUntil: null }] }]);
    expect(keys.authenticate('current', 0)).toBeUndefined();
    expect(keys.authenticate('previous', 0)).toBeUndefined();
    expect(keys.record('adm-00000000000000aa')).toBeUndefined();
    expect(keys.records().map((r) => r.id)).toEqual(['adm-other']);
    expect(keys.authenticate('other', 0)?.id).toBe('adm-other');
  });

  it('forgets a secret once the key is stored without it, and a deleted key entirely', () => {
    const keys = keysWith();
    keys.apply('adm-00000000000000aa', { record: record({ role: 'admin' }), secrets: [{ sha256: 'newest', validUntil: null }] });
    expect(keys.authenticate('current', 0)).toBeUndefined();
    expect(keys.authenticate('previous', 0)).toBeUndefined();
    expect(keys.authenticate('newest', 0)?.role).toBe('admin');
    keys.apply('adm-00000000000000aa', undefined);
    expect(keys.authenticate('newest', 0)).toBeUndefined();
    expect(keys.records()).toEqual([]);
  });
});

const CONFIG_KEYS: readonly AdminKeyConfig[] = [
  { id: 'ops', sha256: digest('ops-secret'), role: 'admin' },
  { id: 'team-a-ops', sha256: digest('team-a-ops-secret'), role: 'team-admin', team: 'team-a' },
];

/** SPEC 16: `/admin/admin-keys` over a real SQLite store, as app.ts wires it. */
describe('AdminKeyAdmin on SQLite', () => {
  let handle: StoreHandle | undefined;
  let sync: StoreMirror | undefined;
  afterEach(async () => {
    sync?.stop();
    await handle?.close();
    handle = sync = undefined;
  });

  async function openParts(options: { open?: boolean } = {}): Promise<{ admin: AdminKeyAdmin; keys: RuntimeAdminKeys; errors: string[] }> {
    handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    if (options.open !== false) expect(await handle.open()).toBe(true);
    const keys = new RuntimeAdminKeys();
    const errors: string[] = [];
    sync = syncAdminKeys(handle, keys, { refreshIntervalMs: 60_000, onError: (err) => errors.push(String(err)) });
    return { admin: new AdminKeyAdmin(handle, keys, sync, () => CONFIG_KEYS), keys, errors };
  }

  it('creates a key whose secret is shown once and works at once, listed after the config keys', async () => {
    const { admin, keys, errors } = await openParts();
    const before = Date.now();
    const created = await admin.create({ role: 'team-admin', team: 'team-b', description: 'ci', expiresAt: EXPIRES_AT });
    expect(created.id).toMatch(/^adm-[0-9a-f]{16}$/);
    expect(created.key).toMatch(/^tg-/);
    expect(Date.parse(created.createdAt ?? '')).toBeGreaterThanOrEqual(before);
    const view = { id: created.id, role: 'team-admin', team: 'team-b', description: 'ci', createdAt: created.createdAt, expiresAt: EXPIRES_AT, disabled: false, source: 'api' };
    expect(created).toEqual({ ...view, key: created.key });
    expect(keys.authenticate(digest(created.key), Date.now())?.id).toBe(created.id);
    expect(admin.list()).toEqual([
      { id: 'ops', role: 'admin', team: null, description: null, createdAt: null, expiresAt: null, disabled: false, source: 'config' },
      { id: 'team-a-ops', role: 'team-admin', team: 'team-a', description: null, createdAt: null, expiresAt: null, disabled: false, source: 'config' },
      view,
    ]);
    expect(admin.get(created.id)).toEqual(view);
    expect(admin.get('team-a-ops')).toMatchObject({ id: 'team-a-ops', source: 'config' });
    expect(errors).toEqual([]);
  });

  it('stores an admin key without team, description or expiry as nulls', async () => {
    const { admin } = await openParts();
    const created = await admin.create({ role: 'viewer' });
    expect(admin.get(created.id)).toMatchObject({ role: 'viewer', team: null, description: null, expiresAt: null, disabled: false });
  });

  it('answers 404 admin_key_not_found for an id it does not hold, also after a revoke', async () => {
    const { admin } = await openParts();
    const created = await admin.create({ role: 'viewer' });
    await admin.revoke(created.id);
    const notFound = (id: string) => ({ status: 404, code: 'admin_key_not_found', param: 'id', message: `No admin key with id "${id}".`, headers: {} });
    expect(await rejection(() => admin.get(created.id))).toEqual(notFound(created.id));
    expect(await rejection(() => admin.update('adm-none', { disabled: true }))).toEqual(notFound('adm-none'));
    expect(await rejection(() => admin.rotate('adm-none', 0))).toEqual(notFound('adm-none'));
    expect(await rejection(() => admin.revoke('adm-none'))).toEqual(notFound('adm-none'));
    expect(admin.list().map((k) => k.id)).toEqual(['ops', 'team-a-ops']);
  });

  it('refuses to change a config key with 409 read_only_key, and changes a stored key beside it', async () => {
    const { admin, keys } = await openParts();
    const readOnly = {
      status: 409,
      code: 'read_only_key',
      param: 'id',
      message: 'Admin key "ops" comes from the configuration file (auth.admin.keys); change it there and reload.',
      headers: {},
    };
    expect(await rejection(() => admin.update('ops', { disabled: true }))).toEqual(readOnly);
    expect(await rejection(() => admin.rotate('ops', 0))).toEqual(readOnly);
    expect(await rejection(() => admin.revoke('ops'))).toEqual(readOnly);

    const created = await admin.create({ role: 'viewer' });
    expect(await admin.update(created.id, { disabled: true })).toMatchObject({ id: created.id, disabled: true, source: 'api' });
    expect(refusal(() => keys.authenticate(digest(created.key), Date.now()))).toMatchObject({ reason: 'disabled' });
    await admin.revoke(created.id);
    expect(refusal(() => keys.authenticate(digest(created.key), Date.now()))).toMatchObject({ reason: 'revoked' });
  });

  it('rotates with an overlap: the old secret works until now + overlap, then only the new one; without an overlap at once', async () => {
    const { admin, keys } = await openParts();
    await expectRotationOverlap(admin, await admin.create({ role: 'viewer' }), (secret, now) => keys.authenticate(secret, now)?.id);
  });

  it('passes on a store failure that is not the database being away (a 500 of ours), not as 503 retry-later', async () => {
    const { admin } = await openParts();
    const failure = new Error('the store failed otherwise');
    handle!.require().createAdminKey = () => Promise.reject(failure);
    await expect(admin.create({ role: 'viewer' })).rejects.toBe(failure);
  });

  it('answers 503 database_unavailable with Retry-After, and makes no change, while the database has not been reached', async () => {
    const { admin, keys } = await openParts({ open: false });
    expect(await rejection(() => admin.create({ role: 'viewer' }))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.update('adm-x', { disabled: true }))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.rotate('adm-x', 30))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.revoke('adm-x'))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(keys.records()).toEqual([]);
  });
});
