import { afterEach, describe, expect, it } from 'vitest';
import { RuntimeKeys } from '../../../src/auth/index.js';
import { KeyAdmin, startKeySync, type KeySync } from '../../../src/keys/index.js';
import type { StaticKeyConfig } from '../../../src/config/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { expectRotationOverlap } from '../../helpers/key-rotation.js';
import { digest } from '../../helpers/keys.js';
import { authRefusal as refusal, gatewayRejection as rejection, UNAVAILABLE_FOR_CHANGE } from '../../helpers/refusals.js';

const CONFIG_KEYS: readonly StaticKeyConfig[] = [
  { id: 'team-a-bot', sha256: digest('a'), team: 'team-a', projects: ['*'], defaultProject: 'default', limits: {} },
  { id: 'team-b-bot', sha256: digest('b'), team: 'team-b', projects: ['rl'], defaultProject: 'rl', limits: { rpm: 5 } },
];

const readOnly = (id: string) => ({
  status: 409,
  code: 'read_only_key',
  param: 'id',
  message: `Key "${id}" comes from the configuration file (auth.keys); change it there and reload.`,
  headers: {},
});
const notFound = (id: string) => ({ status: 404, code: 'key_not_found', param: 'id', message: `No key with id "${id}".`, headers: {} });
const strayDefault = (message: string) => ({ status: 400, code: 'invalid_request', param: 'defaultProject', message: `defaultProject: ${message}`, headers: {} });

/** SPEC 12.1: `/admin/keys` over a real SQLite store, as app.ts wires it. */
describe('KeyAdmin on SQLite', () => {
  let handle: StoreHandle | undefined;
  let sync: KeySync | undefined;
  afterEach(async () => {
    sync?.stop();
    await handle?.close();
    handle = sync = undefined;
  });

  async function openParts(options: { open?: boolean } = {}): Promise<{ admin: KeyAdmin; keys: RuntimeKeys }> {
    handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    if (options.open !== false) expect(await handle.open()).toBe(true);
    const keys = new RuntimeKeys();
    sync = startKeySync(handle, keys, { refreshIntervalMs: 60_000, onError: (err) => expect.fail(String(err)) });
    return { admin: new KeyAdmin(handle, keys, sync, () => CONFIG_KEYS), keys };
  }

  it('lists config keys (read-only, never disabled) then stored ones, all or one team\'s', async () => {
    const { admin } = await openParts();
    const created = await admin.create({ team: 'team-b', projects: ['rl', 'eval'], limits: { rpm: 7 }, description: 'ci', expiresAt: '2030-01-01T00:00:00.000Z' });
    const stored = {
      id: created.id,
      team: 'team-b',
      projects: ['rl', 'eval'],
      defaultProject: 'rl',
      limits: { rpm: 7 },
      models: null,
      description: 'ci',
      createdAt: created.createdAt,
      expiresAt: '2030-01-01T00:00:00.000Z',
      disabled: false,
      source: 'api',
    };
    expect(created).toEqual({ ...stored, key: created.key });
    expect(created.id).toMatch(/^key-[0-9a-f]{16}$/);
    const teamB = { id: 'team-b-bot', team: 'team-b', projects: ['rl'], defaultProject: 'rl', limits: { rpm: 5 }, models: null, description: null, createdAt: null, expiresAt: null, disabled: false, source: 'config' };
    expect(admin.list('team-b')).toEqual([teamB, stored]);
    expect(admin.list().map((k) => k.id)).toEqual(['team-a-bot', 'team-b-bot', created.id]);
    expect(admin.list('team-c')).toEqual([]);
    expect(admin.get('team-b-bot')).toEqual(teamB);
    expect(admin.get(created.id)).toEqual(stored);
  });

  it('refuses a new key whose defaultProject is not among its projects, naming the default it would get', async () => {
    const { admin } = await openParts();
    expect(await rejection(() => admin.create({ team: 'team-a', projects: ['rl', 'eval'], defaultProject: 'prod' }))).toEqual(
      strayDefault('"prod" is not one of the key\'s projects (rl, eval); name one of them, or leave it out to use rl'),
    );
    expect(admin.list('team-a').map((k) => k.source)).toEqual(['config']);
  });

  it('checks projects and defaultProject as a change leaves them, each changed alone or together', async () => {
    const { admin } = await openParts();
    const { id } = await admin.create({ team: 'team-a', projects: ['rl', 'eval'], defaultProject: 'eval' });
    expect(await rejection(() => admin.update(id, { projects: ['rl'] }))).toEqual(
      strayDefault('"eval" is not one of the key\'s projects (rl); name one of them in the same change'),
    );
    expect(await rejection(() => admin.update(id, { defaultProject: 'prod' }))).toEqual(
      strayDefault('"prod" is not one of the key\'s projects (rl, eval); name one of them in the same change'),
    );
    expect(admin.get(id)).toMatchObject({ projects: ['rl', 'eval'], defaultProject: 'eval' });
    expect(await admin.update(id, { projects: ['rl'], defaultProject: 'rl' })).toMatchObject({ projects: ['rl'], defaultProject: 'rl' });
    expect(await admin.update(id, { projects: ['rl', 'prod'] })).toMatchObject({ projects: ['rl', 'prod'], defaultProject: 'rl' });
    expect(await admin.update(id, { defaultProject: 'prod' })).toMatchObject({ projects: ['rl', 'prod'], defaultProject: 'prod' });
    expect(admin.get(id)).toMatchObject({ projects: ['rl', 'prod'], defaultProject: 'prod' });
  });

  it('answers 404 key_not_found for a key it does not hold or has revoked, also for a projects change', async () => {
    const { admin } = await openParts();
    const { id } = await admin.create({ team: 'team-a' });
    await admin.revoke(id);
    expect(await rejection(() => admin.get(id))).toEqual(notFound(id));
    expect(await rejection(() => admin.update(id, { projects: ['rl'], defaultProject: 'rl' }))).toEqual(notFound(id));
    // Not the 400 a live key's stray default would get: a revoked key is not there to change.
    expect(await rejection(() => admin.update(id, { projects: ['rl'] }))).toEqual(notFound(id));
    expect(await rejection(() => admin.update(id, { disabled: true }))).toEqual(notFound(id));
    expect(await rejection(() => admin.update('key-none', { projects: ['rl'] }))).toEqual(notFound('key-none'));
    expect(await rejection(() => admin.rotate('key-none', 0))).toEqual(notFound('key-none'));
    expect(await rejection(() => admin.revoke('key-none'))).toEqual(notFound('key-none'));
  });

  it('refuses to change a config key with 409 read_only_key, and changes a stored key beside it', async () => {
    const { admin, keys } = await openParts();
    expect(await rejection(() => admin.update('team-a-bot', { disabled: true }))).toEqual(readOnly('team-a-bot'));
    expect(await rejection(() => admin.rotate('team-a-bot', 0))).toEqual(readOnly('team-a-bot'));
    expect(await rejection(() => admin.revoke('team-b-bot'))).toEqual(readOnly('team-b-bot'));

    const created = await admin.create({ team: 'team-a' });
    expect(await admin.update(created.id, { disabled: true })).toMatchObject({ id: created.id, disabled: true, source: 'api' });
    expect(refusal(() => keys.authenticate(digest(created.key), Date.now()))).toMatchObject({ reason: 'disabled' });
    await admin.revoke(created.id);
    expect(refusal(() => keys.authenticate(digest(created.key), Date.now()))).toMatchObject({ reason: 'revoked' });
  });

  it('rotates with an overlap: the old secret works until now + overlap, then only the new one; without an overlap at once', async () => {
    const { admin, keys } = await openParts();
    await expectRotationOverlap(admin, await admin.create({ team: 'team-a' }), (secret, now) => keys.authenticate(secret, now)?.id);
  });

  it('passes on a store failure that is not the database being away (a 500 of ours), not as 503 retry-later', async () => {
    const { admin } = await openParts();
    const failure = new Error('the store failed otherwise');
    handle!.require().createKey = () => Promise.reject(failure);
    await expect(admin.create({ team: 'team-a' })).rejects.toBe(failure);
  });

  it('answers 503 database_unavailable, and makes no change, while the database has not been reached', async () => {
    const { admin } = await openParts({ open: false });
    expect(await rejection(() => admin.create({ team: 'team-a' }))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.update('key-x', { disabled: true }))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.update('key-x', { projects: ['rl'] }))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.rotate('key-x', 30))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(await rejection(() => admin.revoke('key-x'))).toEqual(UNAVAILABLE_FOR_CHANGE);
    expect(admin.list().map((k) => k.source)).toEqual(['config', 'config']);
  });
});
