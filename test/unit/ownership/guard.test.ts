import { afterEach, describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { createMetrics } from '../../../src/observability/index.js';
import { OwnershipGuard, OwnershipRegistry } from '../../../src/ownership/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { seriesValue, tempDatabasePath } from '../../helpers/gateway.js';

const TEAM_A = { team: 'team-a', project: 'rl' };
const TEAM_B = { team: 'team-b', project: 'rl' };

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

  async function guard(): Promise<{ guard: OwnershipGuard; denials: (kind: string) => Promise<number> }> {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    expect(await handle.open()).toBe(true);
    closers.push(() => handle.close());
    const registry = new OwnershipRegistry(handle, { requestTimeoutMs: 2_000, refreshIntervalMs: 60_000, onDatabaseError: () => undefined, onRecordDropped: () => undefined });
    closers.push(() => registry.close(Date.now() + 1_000));
    const metrics = createMetrics();
    const denials = async (kind: string): Promise<number> => seriesValue((await metrics.render()).body, `tollgate_ownership_denials_total{kind="${kind}"}`);
    return { guard: new OwnershipGuard({ enabled: true, scope: 'team', unknown: 'deny' }, registry, metrics), denials };
  }

  it('records a job for its creator, and answers another team handed the same job id 404 naming it, counted', async () => {
    const { guard: ownership, denials } = await guard();
    const answer = Buffer.from(JSON.stringify({ id: 'job-7' }));
    expect(await ownership.recordCreation('training_job', answer, TEAM_A, undefined)).toBeUndefined();
    const refusal = await ownership.recordCreation('training_job', answer, TEAM_B, undefined);
    expect(refusal).toBeInstanceOf(GatewayError);
    expect((refusal as GatewayError).toBody()).toEqual({
      error: { message: 'No training job "job-7" was found for this team.', type: 'not_found_error', param: 'id', code: 'resource_not_found' },
    });
    // The model series never appears: nothing was denied of that kind.
    expect([await denials('training_job'), await denials('model')]).toEqual([1, Number.NaN]);
  });

  it('records nothing, and throws nothing, for an answer that is not JSON or has no string id', async () => {
    const { guard: ownership, denials } = await guard();
    for (const answer of ['not json', '{"id":""}', '{"id":7}', '[]']) {
      expect(await ownership.recordCreation('training_job', Buffer.from(answer), TEAM_A, undefined)).toBeUndefined();
    }
    expect(await denials('training_job')).toBeNaN();
  });
});
