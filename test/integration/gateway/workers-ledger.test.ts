import { request as httpRequest, type IncomingMessage } from 'node:http';
import { randomUUID } from 'node:crypto';
import { readdirSync } from 'node:fs';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { ADMIN_ENTRIES, KEY_ENTRIES, KEYS, bearer } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig, type GatewayProcess } from '../../helpers/process.js';
import { openHeldChat } from '../../helpers/raw-http.js';
import { REPLY_SILENCE_MS, startRedis, type TestRedis } from '../../helpers/redis.js';

/** One chat on a connection of its own (the primary hands connections to the workers in turn); its status, or 0 when the connection broke. */
function chat(port: number, marker: string): Promise<number> {
  const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
  return new Promise((resolve) => {
    const headers = { authorization: bearer(KEYS.teamB), 'content-type': 'application/json', 'x-request-id': marker };
    const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/chat/completions', headers, agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
      res.on('error', () => resolve(0));
    });
    req.on('error', () => resolve(0));
    // A connection the primary handed to the worker as it died is never answered: the client gives up on it.
    req.setTimeout(5000, () => req.destroy());
    req.end(body);
  });
}

/** Resolves once the primary has logged a third worker ready: the victim's replacement. */
const readyAgain = (proc: GatewayProcess): Promise<void> => proc.waitFor('"msg":"worker ready"', 3);

const yaml = `
server: { host: 127.0.0.1, port: 8080, shutdownGraceMs: 5000, workers: 2 }
redis: { url: "\${REDIS_URL}", commandTimeoutMs: ${REPLY_SILENCE_MS} }
upstreams:
  service: { url: "\${SERVICE_URL}" }
  inference: { url: "\${INFERENCE_URL}" }
auth:
  keys: ${JSON.stringify(KEY_ENTRIES.map((entry) => ({ ...entry, limits: { rpm: 1_000_000 } })))}
  admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} }
`;

describe('server.workers: 2 — workers killed with -9 mid-load', { timeout: 120_000 }, () => {
  let redis: TestRedis;
  let service: FakeUpstream;
  let inference: FakeUpstream;

  beforeAll(async () => {
    [redis, service, inference] = await Promise.all([startRedis(), startTrainingService(), startInferenceHost()]);
  });
  afterAll(async () => {
    await Promise.all([service.close(), inference.close(), redis.stop()]);
  });

  it('loses no ledger row: every chat answered 2xx has its row, by the marker the client sent', async () => {
    const port = await freePort();
    const path = writeTempConfig(yaml);
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(port), REDIS_URL: redis.url, SERVICE_URL: service.url, INFERENCE_URL: inference.url });
    try {
      await proc.waitFor('"msg":"workers listening"');
      const listening = proc.output().split('\n').find((l) => l.includes('"msg":"workers listening"'))!;
      const [victim] = (JSON.parse(listening) as { pids: number[] }).pids as [number];
      const answered: string[] = [];
      let stop = false;
      let killed = false;
      // Four clients in a loop; the victim dies once 80 chats have been answered, the load goes on
      // until its replacement is ready and has served, then stops.
      const client = async (): Promise<void> => {
        let attempts = 0;
      while (!stop && (attempts += 1) < 1000) {
          const marker = `kill9-${randomUUID()}`;
          const status = await chat(port, marker);
          if (status >= 200 && status < 300) answered.push(marker);
          if (!killed && answered.length >= 80) {
            killed = true;
            process.kill(victim, 'SIGKILL');
            void proc.waitFor('"msg":"worker exited: replacing it"').then(() => readyAgain(proc)).then(() => {
              const before = answered.length;
              const until = (): void => void (answered.length >= before + 20 ? (stop = true) : setImmediate(until));
              until();
            });
          }
        }
      };
      await Promise.all([client(), client(), client(), client()]);
      expect(proc.output()).toContain('"signal":"SIGKILL"');
      proc.child.kill('SIGTERM');
      expect(await proc.exited()).toBe(0);
      const db = new Database(path.replace(/config\.yaml$/, 'tollgate.db'), { readonly: true });
      const stored = new Set((db.prepare("SELECT request_id FROM ledger WHERE request_id LIKE 'kill9-%'").all() as Array<{ request_id: string }>).map((r) => r.request_id));
      db.close();
      const lost = answered.filter((marker) => !stored.has(marker));
      expect({ answered: answered.length, lost }).toEqual({ answered: answered.length, lost: [] });
      // Drained: every journal segment was written and deleted.
      expect(readdirSync(path.replace(/config\.yaml$/, 'tollgate.db.ledger-journal'))).toEqual([]);
    } finally {
      proc.kill('SIGKILL');
      await proc.exited();
    }
  });

  it('never sends a chat POST twice: the workers die with it mid-request, their replacements do not resend it', async () => {
    const port = await freePort();
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port), REDIS_URL: redis.url, SERVICE_URL: service.url, INFERENCE_URL: inference.url });
    try {
      await proc.waitFor('"msg":"workers listening"');
      const listening = proc.output().split('\n').find((l) => l.includes('"msg":"workers listening"'))!;
      const pids = (JSON.parse(listening) as { pids: number[] }).pids;
      // Each arrival at the upstream, by the marker the client sent, taken when the headers arrive.
      const arrived: string[] = [];
      const onRequest = (req: IncomingMessage): void => void arrived.push(String(req.headers['x-request-id']));
      service.server.on('request', onRequest);
      const marker = `mid-${randomUUID()}`;
      const body = JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true });
      const { res } = await openHeldChat(port, { authorization: bearer(KEYS.teamB), 'x-request-id': marker }, body, service);
      // The chat is at the upstream, its first event relayed: whichever worker holds it dies with the other.
      for (const pid of pids) process.kill(pid, 'SIGKILL');
      await new Promise<void>((resolve) => res.on('close', resolve));
      expect(res.complete).toBe(false);
      await proc.waitFor('"msg":"worker ready"', 4);
      expect(await chat(port, `after-${marker}`)).toBe(200);
      service.server.off('request', onRequest);
      expect(arrived.filter((id) => id === marker)).toEqual([marker]);
    } finally {
      proc.kill('SIGKILL');
      await proc.exited();
    }
  });
});
