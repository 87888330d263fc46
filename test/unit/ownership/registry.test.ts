import { afterEach, describe, expect, it } from 'vitest';
import { OwnershipRegistry } from '../../../src/ownership/index.js';
import { type ResourceRecord, silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';

const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const ARTIFACT = 'acme/rl/policy';

const model = (id: string, createdAt: string, changes: Partial<ResourceRecord> = {}): ResourceRecord => ({
  kind: 'model',
  id,
  team: `team-of-${id}`,
  project: 'rl',
  artifact: ARTIFACT,
  createdAt,
  ...changes,
});

/**
 * SPEC 13: the registry on a real SQLite file. Each registry has a handle of its own on the
 * file, as separate gateway instances do: a write through one handle is not announced to
 * another (what a lost change notification looks like).
 */
describe('OwnershipRegistry', () => {
  const opened: { handle: StoreHandle; registry?: OwnershipRegistry }[] = [];
  afterEach(async () => {
    for (const { handle, registry } of opened.splice(0)) {
      await registry?.close(Date.now() + 1_000);
      await handle.close();
    }
  });

  async function openHandle(path: string): Promise<StoreHandle> {
    const handle = new StoreHandle({ url: '', path }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    opened.push({ handle });
    return handle;
  }

  async function openRegistry(path: string, refreshIntervalMs = 60_000): Promise<{ registry: OwnershipRegistry; databaseErrors: unknown[] }> {
    const handle = await openHandle(path);
    const databaseErrors: unknown[] = [];
    const registry = new OwnershipRegistry(handle, {
      requestTimeoutMs: 2_000,
      refreshIntervalMs,
      onDatabaseError: (err) => databaseErrors.push(err),
      onRecordDropped: (record) => databaseErrors.push(record),
    });
    opened.at(-1)!.registry = registry;
    return { registry, databaseErrors };
  }

  it('gives a name to the oldest model whichever order they are heard in; in one millisecond to the smaller id, as the store does', async () => {
    const path = tempDatabasePath();
    const store = (await openHandle(path)).require();
    const models = [model('m-old', T0), model('m-new', T1), model('m-b', T0), model('m-a', T0)];
    for (const record of models) await store.recordResource(record);
    expect((await store.findModelByArtifact(ARTIFACT))?.id).toBe('m-a');

    for (const order of [models, [...models].reverse(), [models[1]!, models[3]!, models[0]!, models[2]!]]) {
      const { registry } = await openRegistry(path);
      for (const record of order) registry.apply(record, 'model', record.id);
      expect(registry.ownerOfArtifact(ARTIFACT)?.id).toBe('m-a');
    }
  });

  it('hands a removed holder\'s name to the oldest remaining model (one millisecond: the smaller id); removing another model changes nothing', async () => {
    for (const order of [['m-b', 'm-a'], ['m-a', 'm-b']]) {
      const { registry } = await openRegistry(tempDatabasePath());
      registry.apply(model('m-old', T0), 'model', 'm-old');
      registry.apply(model('m-newest', '2026-01-01T00:00:02.000Z'), 'model', 'm-newest');
      for (const id of order) registry.apply(model(id, T1), 'model', id);
      expect(registry.ownerOfArtifact(ARTIFACT)?.id).toBe('m-old');

      registry.apply(undefined, 'model', 'm-newest');
      expect(registry.ownerOfArtifact(ARTIFACT)?.id).toBe('m-old');
      registry.apply(undefined, 'model', 'm-old');
      expect(registry.ownerOfArtifact(ARTIFACT)?.id).toBe('m-a');
      registry.apply(undefined, 'model', 'm-a');
      expect(registry.ownerOfArtifact(ARTIFACT)?.id).toBe('m-b');
      registry.apply(undefined, 'model', 'm-b');
      expect(registry.ownerOfArtifact(ARTIFACT)).toBeUndefined();
    }
  });

  it('moves a name with its holder when an admin write changes the holder\'s team or artifact; a later model\'s change does not take the name', async () => {
    const { registry } = await openRegistry(tempDatabasePath());
    registry.apply(model('m-1', T0, { team: 'team-a' }), 'model', 'm-1');
    registry.apply(model('m-2', T1, { team: 'team-c' }), 'model', 'm-2');

    registry.apply(model('m-1', T0, { team: 'team-b' }), 'model', 'm-1');
    expect(registry.ownerOfArtifact(ARTIFACT)).toEqual(model('m-1', T0, { team: 'team-b' }));
    registry.apply(model('m-2', T1, { team: 'team-d' }), 'model', 'm-2');
    expect(registry.ownerOfArtifact(ARTIFACT)?.team).toBe('team-b');

    registry.apply(model('m-1', T0, { team: 'team-b', artifact: 'acme/rl/renamed' }), 'model', 'm-1');
    expect(registry.ownerOfArtifact('acme/rl/renamed')?.id).toBe('m-1');
    expect(registry.ownerOfArtifact(ARTIFACT)).toEqual(model('m-2', T1, { team: 'team-d' }));
    expect(await registry.ownerOf('model', 'm-1')).toEqual(model('m-1', T0, { team: 'team-b', artifact: 'acme/rl/renamed' }));
  });

  it('keeps the first default entity it learns', async () => {
    const { registry } = await openRegistry(tempDatabasePath());
    expect(registry.defaultEntity).toBeUndefined();
    registry.learnDefaultEntity('acme');
    registry.learnDefaultEntity('other');
    expect(registry.defaultEntity).toBe('acme');
  });

  it('asks the store about an unknown resource once per refresh period, and again after a full reload', async () => {
    const path = tempDatabasePath();
    const writer = (await openHandle(path)).require();
    const { registry: remembering, databaseErrors } = await openRegistry(path, 60_000);
    const { registry: forgetting } = await openRegistry(path, 0);
    const job = (id: string): ResourceRecord => ({ kind: 'job', id, team: 'team-a', project: 'rl', artifact: null, createdAt: T0 });

    expect(await remembering.ownerOf('job', 'j-1')).toBeUndefined();
    expect(await forgetting.ownerOf('job', 'j-1')).toBeUndefined();
    await writer.recordResource(job('j-1'));
    // Created on another instance whose notification did not arrive: the remembered miss holds until a refresh.
    expect(await remembering.ownerOf('job', 'j-1')).toBeUndefined();
    expect(await forgetting.ownerOf('job', 'j-1')).toEqual(job('j-1'));

    expect(await remembering.ownerOf('job', 'j-2')).toBeUndefined();
    expect(await remembering.loadAll()).toBe(true);
    expect(await remembering.ownerOf('job', 'j-1')).toEqual(job('j-1'));
    await writer.recordResource(job('j-2'));
    expect(await remembering.ownerOf('job', 'j-2')).toEqual(job('j-2'));
    expect(databaseErrors).toEqual([]);
  });

  it('records a creation, answering the holder when the id is held already', async () => {
    const { registry } = await openRegistry(tempDatabasePath());
    const first = model('m-1', T0, { team: 'team-a' });
    expect(await registry.record(first)).toEqual(first);
    expect(await registry.record(model('m-1', T1, { team: 'team-b' }))).toEqual(first);
    expect(await registry.ownerOf('model', 'm-1')).toEqual(first);
    expect(registry.ownerOfArtifact(ARTIFACT)).toEqual(first);
  });

  it('works from memory while the database has not been reached, and reports the creations it could not write when it closes', async () => {
    const handle = new StoreHandle({ url: 'postgres://127.0.0.1:1/none', path: '' }, { logger: silentLogger });
    opened.push({ handle });
    const databaseErrors: string[] = [];
    const dropped: ResourceRecord[] = [];
    const registry = new OwnershipRegistry(handle, {
      requestTimeoutMs: 100,
      refreshIntervalMs: 60_000,
      onDatabaseError: (err) => databaseErrors.push(String(err)),
      onRecordDropped: (record) => dropped.push(record),
    });
    opened.at(-1)!.registry = registry;
    expect(await registry.ownerOf('job', 'j-1')).toBeUndefined();
    const created = model('m-1', T0);
    const kept = model('m-2', T1);
    expect(await registry.record(created)).toEqual(created);
    expect(await registry.record(kept)).toEqual(kept);
    expect(await registry.ownerOf('model', 'm-1')).toEqual(created);
    expect(registry.ownerOfArtifact(ARTIFACT)).toEqual(created);
    expect(databaseErrors.slice(0, 2)).toEqual(['Error: the database has not been reached', 'Error: the database has not been reached']);

    databaseErrors.length = 0;
    await registry.release('model', 'm-1');
    expect(await registry.ownerOf('model', 'm-1')).toBeUndefined();
    expect(registry.ownerOfArtifact(ARTIFACT)).toEqual(kept);
    expect(databaseErrors).toContain('DatabaseUnavailableError: the database has not been reached since start-up');

    await registry.close(Date.now() + 300);
    expect(dropped).toEqual([created, kept]);
  });
});
