import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { createMetrics } from '../../../src/observability/index.js';
import { OwnershipGuard, OwnershipRegistry } from '../../../src/ownership/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { seriesValue, tempDatabasePath } from '../../helpers/gateway.js';

const TEAM_A = { team: 'team-a', project: 'rl' };
const TEAM_B = { team: 'team-b', project: 'rl' };
const JOB = { kind: 'training_job', id: ['id'] };
const RUN = { kind: 'run', id: ['run_id'] };
const ORIGIN = { route: '/v1/preview/training-jobs' };

/**
 * The guard's answer when an upstream answers a creation with the id of a resource another team
 * holds (a job's id handed back twice): never that id, a 404 as for an unknown resource, counted
 * as a denial of its kind. The registry is real, on a SQLite file.
 */
describe('OwnershipGuard.recordCreation', () => {
  const closers: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const close of closers.splice(0).reverse()) await close();
  });

  interface Harness {
    guard: OwnershipGuard;
    denials: (kind: string) => Promise<number>;
    unrecorded: (kind: string) => Promise<number>;
    warnings: string[];
  }

  async function guard(): Promise<Harness> {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    closers.push(() => handle.close());
    const registry = new OwnershipRegistry(handle, { requestTimeoutMs: 2_000, refreshIntervalMs: 60_000, onDatabaseError: () => undefined, onRecordDropped: () => undefined });
    closers.push(() => registry.close(Date.now() + 1_000));
    const metrics = createMetrics();
    const denials = async (kind: string): Promise<number> => seriesValue((await metrics.render()).body, `tollgate_ownership_denials_total{kind="${kind}"}`);
    const unrecorded = async (kind: string): Promise<number> => seriesValue((await metrics.render()).body, `tollgate_ownership_unrecorded_total{kind="${kind}"}`);
    const warnings: string[] = [];
    const logger = { warn: (_fields: object, message: string) => void warnings.push(message) } as never;
    return { guard: new OwnershipGuard({ enabled: true, scope: 'team', unknown: 'deny' }, registry, metrics, logger), denials, unrecorded, warnings };
  }

  it('records a job for its creator, and answers another team handed the same job id 404 naming it, counted', async () => {
    const { guard: ownership, denials } = await guard();
    const answer = Buffer.from(JSON.stringify({ id: 'job-7' }));
    expect(await ownership.recordCreation(JOB, answer, TEAM_A, undefined, ORIGIN)).toBeUndefined();
    const refusal = await ownership.recordCreation(JOB, answer, TEAM_B, undefined, ORIGIN);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect((refusal as GatewayError).toBody()).toEqual({
      error: { message: 'No training job "job-7" was found for this team.', type: 'not_found_error', param: 'id', code: 'resource_not_found' },
    });
    // The model series never appears: nothing was denied of that kind.
    expect([await denials('training_job'), await denials('model')]).toEqual([1, Number.NaN]);
  });

  it('records nothing, and throws nothing, for an answer that is not JSON or has no string id: counted and named in a warning', async () => {
    const { guard: ownership, denials, unrecorded, warnings } = await guard();
    for (const answer of ['not json', '{"id":""}', '{"id":7}', '[]']) {
      expect(await ownership.recordCreation(JOB, Buffer.from(answer), TEAM_A, undefined, ORIGIN)).toBeUndefined();
    }
    expect(await denials('training_job')).toBeNaN();
    expect(await unrecorded('training_job')).toBe(4);
    expect(warnings[0]).toBe(
      'route /v1/preview/training-jobs answered a creation with no id at /id: the training job was not recorded (ownership.unknown decides who may use it)',
    );
  });

  it('reads the id at the route\'s pointer (/run_id), not at /id, and names that field in the 404', async () => {
    const { guard: ownership, unrecorded } = await guard();
    const answer = Buffer.from(JSON.stringify({ id: 'decoy', run_id: 'run-1' }));
    expect(await ownership.recordCreation(RUN, answer, TEAM_A, undefined, ORIGIN)).toBeUndefined();
    await ownership.checkResource('run', 'run-1', TEAM_A, 'run_id');
    await expect(ownership.checkResource('run', 'decoy', TEAM_A, 'run_id')).rejects.toBeInstanceOf(GatewayError);
    const refusal = await ownership.recordCreation(RUN, answer, TEAM_B, undefined, ORIGIN);
    expect((refusal as GatewayError).toBody().error).toMatchObject({ param: 'run_id', code: 'resource_not_found' });
    expect(await unrecorded('run')).toBeNaN();
  });
});

describe('OwnershipGuard.checkAnswer (checks-response)', () => {
  it('passes an answer naming the caller\'s run or nothing, and answers another team\'s or an unknown run with the 404', async () => {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    const registry = new OwnershipRegistry(handle, { requestTimeoutMs: 2_000, refreshIntervalMs: 60_000, onDatabaseError: () => undefined, onRecordDropped: () => undefined });
    try {
      const ownership = new OwnershipGuard({ enabled: true, scope: 'team', unknown: 'deny' }, registry, createMetrics());
      await ownership.recordCreation(RUN, Buffer.from('{"run_id":"run-a"}'), TEAM_A, undefined, ORIGIN);
      const named = Buffer.from('{"run_id":"run-a","name":"shared-name"}');
      expect(await ownership.checkAnswer(RUN, named, TEAM_A)).toBeUndefined();
      expect(await ownership.checkAnswer(RUN, Buffer.from('{"name":"x"}'), TEAM_B)).toBeUndefined();
      expect((await ownership.checkAnswer(RUN, named, TEAM_B))?.toBody()).toEqual({
        error: { message: 'No run "run-a" was found for this team.', type: 'not_found_error', param: 'run_id', code: 'resource_not_found' },
      });
      expect((await ownership.checkAnswer(RUN, Buffer.from('{"run_id":"never-seen"}'), TEAM_A))?.status).toBe(404);
    } finally {
      await registry.close(Date.now() + 1_000);
      await handle.close();
    }
  });
});
