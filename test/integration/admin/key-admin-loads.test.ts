import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { RuntimeKeys } from '../../../src/auth/index.js';
import { KeyAdmin, startKeySync, type KeySync } from '../../../src/keys/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { digest } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

/**
 * SPEC 12.1: a change made through the admin API is in this instance's memory when the call
 * answers, and is read from the store once: the store announces the write to this instance's
 * listeners as it commits, and the admin call waits for that load rather than making another.
 */
describe.each(['sqlite', 'postgres'] as const)('KeyAdmin on %s: one load per write on the instance that made it', (dialect) => {
  let database: TestDatabase | undefined;
  let handle: StoreHandle;
  let sync: KeySync;

  beforeAll(async () => {
    if (dialect === 'postgres') database = await createTestDatabase();
  });
  afterEach(async () => {
    sync.stop();
    await handle.close();
  });
  afterAll(async () => {
    await database?.drop();
  });

  /** The parts app.ts builds, on a real store whose key reads are counted (and still answered by it). */
  async function openParts(): Promise<{ admin: KeyAdmin; keys: RuntimeKeys; loads: string[]; errors: string[] }> {
    handle = new StoreHandle({ url: database?.url ?? '', path: dialect === 'sqlite' ? tempDatabasePath() : '' }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    const store = handle.require();
    const loads: string[] = [];
    const loadKey = store.loadKey.bind(store);
    store.loadKey = (id, options) => {
      loads.push(id);
      return loadKey(id, options);
    };
    const keys = new RuntimeKeys();
    const errors: string[] = [];
    sync = startKeySync(handle, keys, { refreshIntervalMs: 60_000, onError: (err) => errors.push(String(err)) });
    return { admin: new KeyAdmin(handle, keys, sync, () => []), keys, loads, errors };
  }

  it('create, update, rotate and revoke each read the key once, and each is in memory when the call answers', async () => {
    const { admin, keys, loads, errors } = await openParts();
    const created = await admin.create({ team: 'team-a', projects: ['prod'] });
    expect(keys.authenticate(digest(created.key), Date.now())?.id).toBe(created.id);
    expect(loads).toEqual([created.id]);

    await admin.update(created.id, { limits: { rpm: 5 } });
    expect(keys.authenticate(digest(created.key), Date.now())?.limits).toEqual({ rpm: 5 });
    expect(loads).toEqual([created.id, created.id]);

    const rotated = await admin.rotate(created.id, 0);
    expect(keys.authenticate(digest(rotated.key), Date.now())?.id).toBe(created.id);
    expect(keys.authenticate(digest(created.key), Date.now())).toBeUndefined();
    expect(loads).toEqual([created.id, created.id, created.id]);

    await admin.revoke(created.id);
    expect(() => keys.authenticate(digest(rotated.key), Date.now())).toThrow('This API key has been revoked.');
    expect(loads).toEqual([created.id, created.id, created.id, created.id]);
    expect(errors).toEqual([]);
  });
});
