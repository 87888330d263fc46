import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../fixtures/webhook-receiver.js';
import { digest } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { killInstances, startInstances, writeTempConfig, type Instance } from '../../helpers/process.js';
import { eventually } from '../../helpers/wait.js';

/**
 * SPEC 24: one instance delivers at a time (a lease row in PostgreSQL); `kill -9` of it loses
 * nothing: an event it had stored and not yet delivered is delivered by the other instance once
 * the lease has expired.
 */
const ADMIN = 'tg-takeover-admin-key-0123456789';

describe('the deliverer killed with -9', () => {
  let database: TestDatabase;
  let receiver: WebhookReceiver;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let procs: Instance[] = [];

  const api = (port: number, path: string, method = 'GET') =>
    fetch(`http://127.0.0.1:${port}${path}`, { method, headers: { authorization: `Bearer ${ADMIN}` } });
  const eventIds = (): string[] => receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id);

  beforeAll(async () => {
    database = await createTestDatabase();
    receiver = await startWebhookReceiver('ok');
    service = await startTrainingService();
    inference = await startInferenceHost();
    const config = writeTempConfig(`
server: { host: 127.0.0.1, port: 8080, shutdownGraceMs: 500 }
upstreams:
  service: { url: "${service.url}" }
  inference: { url: "${inference.url}" }
auth:
  admin: { keys: [{ id: ops, sha256: "${digest(ADMIN)}" }] }
database: { url: "${database.url}" }
notifications:
  webhooks: [{ name: hook, url: "${receiver.url}/hook", events: ["*"], secret: "takeover-secret-0123456789" }]
  delivery: { pollMs: 100, leaseMs: 2000, backoffMs: 100, maxBackoffMs: 200, timeoutMs: 1000 }
`);
    procs = await startInstances(config, 2);
  }, 60_000);

  afterAll(async () => {
    await killInstances(procs);
    await Promise.all([receiver.close(), service.close(), inference.close()]);
    await database.drop();
  });

  it('lets the other instance deliver what the killed one had stored', async () => {
    const delivering = async (port: number): Promise<boolean> => ((await (await api(port, '/admin/notifications')).json()) as { delivering: boolean }).delivering;
    let leader: (typeof procs)[number] | undefined;
    await eventually(async () => {
      for (const candidate of procs) if (await delivering(candidate.port)) leader = candidate;
      return leader !== undefined;
    });
    const survivor = procs.find((p) => p !== leader)!;
    expect(await delivering(survivor.port)).toBe(false);

    // The leader stores an event and tries it; the receiver is down, so it stays undelivered.
    receiver.mode = 'down';
    const sent = (await (await api(leader!.port, '/admin/notifications/test', 'POST')).json()) as { id: string };
    await receiver.waitUntil(() => eventIds().includes(sent.id));
    leader!.proc.kill('SIGKILL');
    await leader!.proc.exited();
    receiver.mode = 'ok';

    // The survivor takes the lease once it has expired, and delivers the dead instance's event.
    const before = receiver.received.length;
    await receiver.waitUntil((all) => all.slice(before).some((r) => (JSON.parse(r.body) as { id: string }).id === sent.id));
    expect(await delivering(survivor.port)).toBe(true);
    await eventually(async () => {
      const list = (await (await api(survivor.port, '/admin/notifications?state=delivered')).json()) as { data: Array<{ event_id: string }> };
      return list.data.some((d) => d.event_id === sent.id);
    });
  }, 60_000);
});
