import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { digest } from '../../helpers/keys.js';
import { killInstances, startInstances, writeTempConfig, type Instance } from '../../helpers/process.js';
import { openHeldChat } from '../../helpers/raw-http.js';
import { REPLY_SILENCE_MS, startRedis, type TestRedis } from '../../helpers/redis.js';
import { eventually } from '../../helpers/wait.js';

/**
 * A gateway that dies while holding concurrency slots must not leak them: slots are leases
 * in Redis that expire (`rateLimits.concurrencyLeaseMs`) unless a live instance renews them.
 */
const KEY = 'tg-crash-key';

describe('concurrency slots of a crashed gateway process', () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let procs: Instance[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    service = await startTrainingService();
    inference = await startInferenceHost();
    const config = writeTempConfig(`
server: { host: 127.0.0.1, port: 8080, shutdownGraceMs: 500 }
upstreams:
  service: { url: "${service.url}" }
  inference: { url: "${inference.url}" }
auth:
  keys: [{ id: crash-key, sha256: "${digest(KEY)}", team: team-c, limits: { concurrency: 1 } }]
rateLimits: { concurrencyLeaseMs: 1500 }
redis: { url: "${redis.url}", commandTimeoutMs: ${REPLY_SILENCE_MS} }
`);
    procs = await startInstances(config, 2);
  }, 60_000);

  afterAll(async () => {
    await killInstances(procs);
    await Promise.all([service.close(), inference.close()]);
    await redis.stop();
  });

  it('frees the slot after the lease expires, not before, and never while the holder lives', async () => {
    const [holder, survivor] = procs as [(typeof procs)[number], (typeof procs)[number]];
    const chat = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hold' }], stream: true });
    const { res } = await openHeldChat(holder.port, { authorization: `Bearer ${KEY}` }, chat, service);
    expect(res.statusCode).toBe(200);
    res.resume();
    const models = () => fetch(`http://127.0.0.1:${survivor.port}/v1/models`, { headers: { authorization: `Bearer ${KEY}` } });

    // While the holder lives it renews its lease: the slot stays taken past one lease period.
    const startedAt = Date.now();
    await eventually(async () => Date.now() - startedAt > 2000 || (await models()).status !== 429, 5000);
    expect((await models()).status).toBe(429);

    holder.proc.kill('SIGKILL');
    await holder.proc.exited();
    // Nobody renews the dead instance's lease: within one lease period the slot is free again.
    await eventually(async () => (await models()).status === 200, 5000);
  });
});
