import { describe, expect, it } from 'vitest';
import type { ContractContext } from './durable-store.contract.js';
import { resource } from './store-fixtures.js';

export function describeResourceContract({ store }: ContractContext): void {
  describe('resource ownership', () => {
    it('records a new resource and answers it from getResource', async () => {
      const model = resource();
      expect(await store().recordResource(model)).toEqual(model);
      expect(await store().getResource('model', 'model-1')).toEqual(model);
      expect(await store().getResource('model', 'nope')).toBeUndefined();
      expect(await store().getResource('training_job', 'model-1')).toBeUndefined();
    });

    it('keeps the first owner: recording a taken kind+id answers the existing row unchanged', async () => {
      const first = resource();
      await store().recordResource(first);
      const second = resource({ team: 'team-b', project: 'dev', artifact: 'other/x/y', createdAt: '2025-04-01T00:00:00.000Z' });
      expect(await store().recordResource(second)).toEqual(first);
      expect(await store().getResource('model', 'model-1')).toEqual(first);
    });

    it('tells kinds apart: a model and a training job may share an id', async () => {
      const job = resource({ kind: 'training_job', id: 'model-1', team: 'team-b', artifact: null });
      await store().recordResource(resource());
      expect(await store().recordResource(job)).toEqual(job);
      expect(await store().getResource('training_job', 'model-1')).toEqual(job);
    });

    it('finds the oldest model by artifact, and never a training job', async () => {
      await store().recordResource(resource({ id: 'm-new', createdAt: '2025-03-05T00:00:00.000Z' }));
      await store().recordResource(resource({ id: 'm-old', createdAt: '2025-03-02T00:00:00.000Z' }));
      await store().recordResource(resource({ kind: 'training_job', id: 'job', artifact: 'acme/jobs/x', createdAt: '2025-01-01T00:00:00.000Z' }));
      expect((await store().findModelByArtifact('acme/prod/qwen-ft'))?.id).toBe('m-old');
      expect(await store().findModelByArtifact('acme/jobs/x')).toBeUndefined();
      expect(await store().findModelByArtifact('acme/prod/none')).toBeUndefined();
    });

    it('assigns an unknown resource, and reassigns a known one keeping createdAt and artifact', async () => {
      const adopted = resource({ kind: 'training_job', id: 'job-1', artifact: null });
      expect(await store().assignResource(adopted)).toEqual(adopted);
      await store().recordResource(resource());
      const moved = await store().assignResource(resource({ team: 'team-b', project: 'dev', artifact: null, createdAt: '2025-09-09T00:00:00.000Z' }));
      expect(moved).toEqual(resource({ team: 'team-b', project: 'dev' }));
      expect(await store().assignResource(resource({ team: 'team-b', project: 'dev', artifact: 'acme/dev/renamed' }))).toEqual(
        resource({ team: 'team-b', project: 'dev', artifact: 'acme/dev/renamed' }),
      );
    });

    it('releases a resource once', async () => {
      await store().recordResource(resource());
      expect(await store().releaseResource('model', 'model-1')).toBe(true);
      expect(await store().releaseResource('model', 'model-1')).toBe(false);
      expect(await store().getResource('model', 'model-1')).toBeUndefined();
      // Released, the id is free for its next owner.
      const next = resource({ team: 'team-b' });
      expect(await store().recordResource(next)).toEqual(next);
    });

    it('lists resources by createdAt, filtered by team, project and kind', async () => {
      const rows = [
        resource({ id: 'm1', createdAt: '2025-03-03T00:00:00.000Z' }),
        resource({ id: 'm2', team: 'team-b', createdAt: '2025-03-01T00:00:00.000Z' }),
        resource({ kind: 'training_job', id: 'j1', artifact: null, createdAt: '2025-03-02T00:00:00.000Z' }),
        resource({ id: 'm3', project: 'dev', createdAt: '2025-03-04T00:00:00.000Z' }),
      ];
      for (const row of rows) await store().recordResource(row);
      const ids = async (filter?: Parameters<ReturnType<typeof store>['listResources']>[0]) => (await store().listResources(filter)).map((r) => r.id);
      expect(await ids()).toEqual(['m2', 'j1', 'm1', 'm3']);
      expect(await ids({ team: 'team-a' })).toEqual(['j1', 'm1', 'm3']);
      expect(await ids({ team: 'team-a', project: 'prod' })).toEqual(['j1', 'm1']);
      expect(await ids({ kind: 'model', project: 'prod' })).toEqual(['m2', 'm1']);
      expect(await ids({ team: 'team-c' })).toEqual([]);
      expect((await store().listResources({ kind: 'training_job' }))[0]).toEqual(rows[2]);
    });
  });
}
