import { once } from 'node:events';
import { writeFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { startFakeUpstream, sendJson, type FakeUpstream } from '../../fixtures/fake-upstream.js';
import { MODEL_LIST, startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService } from '../../fixtures/training-service.js';
import { metricValue, startGateway, tempDatabasePath, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';
import { freePort } from '../../helpers/ports.js';
import { eventually } from '../../helpers/wait.js';

const auth = { authorization: bearer(KEYS.teamA) };
const chat = JSON.stringify({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }] });

/** Runs `count` calls of `send`, `concurrency` at a time; `onDone(i)` after each completes. */
async function load<T>(count: number, concurrency: number, send: (i: number) => Promise<T>, onDone?: (done: number) => void): Promise<T[]> {
  const results: T[] = new Array(count);
  let next = 0;
  let done = 0;
  const worker = async () => {
    while (next < count) {
      const i = next++;
      results[i] = await send(i);
      done += 1;
      onDone?.(done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return results;
}

const getModels = async (url: string) => {
  const res = await fetch(`${url}/v1/models`, { headers: auth });
  return { status: res.status, body: (await res.json()) as unknown };
};

/** An inference host that answers /v1/models after `delayMs`, or 503 while `sick`. */
async function slowHost(delayMs: number, state = { sick: false }): Promise<FakeUpstream> {
  return startFakeUpstream((_req, res) => {
    if (state.sick) return sendJson(res, 503, { error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: 'overloaded' } });
    setTimeout(() => sendJson(res, 200, MODEL_LIST), delayMs);
  });
}

describe('upstream pools (SPEC 19)', () => {
  const cleanups: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });
  async function gatewayWith(hosts: { service?: string[]; inference?: string[] }, extra: Record<string, unknown> = {}): Promise<RunningGateway> {
    const svc = await startTrainingService();
    const inf = await startInferenceHost();
    cleanups.push(() => svc.close(), () => inf.close());
    const targets = (urls: string[] | undefined) => (urls ? { url: undefined, targets: urls.map((url) => ({ url })) } : {});
    const gw = await startGateway(
      testConfig({ service: svc.url, inference: inf.url }, { upstreams: { service: { ...targets(hosts.service), ...extra }, inference: { ...targets(hosts.inference), ...extra } } }),
    );
    cleanups.push(() => gw.close());
    return gw;
  }
  async function hosts(n: number, start: () => Promise<FakeUpstream>): Promise<FakeUpstream[]> {
    const started = await Promise.all(Array.from({ length: n }, start));
    for (const host of started) cleanups.push(() => host.close().catch(() => undefined));
    return started;
  }

  it('loses no GET when one of three inference hosts goes away mid-way', async () => {
    const inference = await hosts(3, startInferenceHost);
    const gw = await gatewayWith({ inference: inference.map((h) => h.url) });
    let killed: Promise<void> | undefined;
    const results = await load(300, 20, () => getModels(gw.url), (done) => {
      if (done === 100) killed = inference[1]!.close();
    });
    await killed;
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    expect(results.every((r) => JSON.stringify(r.body) === JSON.stringify(MODEL_LIST))).toBe(true);
    for (const host of inference) expect(host.requests.length).toBeGreaterThan(0);
  });

  it('never sends a chat POST twice when one of three hosts goes away mid-way', async () => {
    const services = await hosts(3, startTrainingService);
    // Each host's log of request ids, taken when the headers arrive (before any body: a resent
    // request shows here even when the host went away before reading it).
    const arrived = services.map((host) => {
      const ids: string[] = [];
      host.server.on('request', (req) => ids.push(String(req.headers['x-request-id'])));
      return ids;
    });
    const gw = await gatewayWith({ service: services.map((h) => h.url) });
    let killed: Promise<void> | undefined;
    const results = await load(150, 20, async () => {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: chat });
      await res.arrayBuffer();
      return { status: res.status, id: res.headers.get('x-request-id') ?? '' };
    }, (done) => {
      if (done === 50) killed = services[1]!.close();
    });
    await killed;
    const seen = arrived.flat();
    expect(new Set(seen).size).toBe(seen.length);
    // Only a chat whose bytes had left for the host that went away may fail (502: at most the 20 in
    // flight). Some of those the host never read (written to a kept-alive socket as it closed), but
    // the gateway cannot tell them from one the host took and died on: it does not send them again.
    const failed = results.filter((r) => r.status !== 200);
    expect(failed.filter((r) => r.status !== 502)).toEqual([]);
    expect(failed.length).toBeLessThanOrEqual(20);
    expect(results.filter((r) => r.status === 200).length).toBe(150 - failed.length);
  });

  it('retries a chat POST refused by one target on another, and never repeats one that reached a target', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const services = await hosts(2, startTrainingService);
    const gw = await gatewayWith({ service: [dead, services[0]!.url, services[1]!.url] }, { retries: 2 });
    for (let i = 0; i < 6; i += 1) {
      const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: chat });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    const before = services[0]!.started + services[1]!.started;
    const res = await fetch(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json', 'x-fixture-mode': 'reset' }, body: chat });
    expect(res.status).toBe(502);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('upstream_unavailable');
    expect(services[0]!.started + services[1]!.started - before).toBe(1);
    // Each chat is one request to the rest of the gateway, however many attempts it took.
    const retried = await metricValue(gw.url, 'tollgate_upstream_retries_total{upstream="service",reason="connect"}');
    expect(retried).toBeGreaterThan(0);
    const text = await (await fetch(`${gw.url}/metrics`)).text();
    const chats = text
      .split('\n')
      .filter((line) => line.startsWith('tollgate_requests_total{') && line.includes('route="/v1/chat/completions"'))
      .reduce((sum, line) => sum + Number(line.split(' ')[1]), 0);
    expect(chats).toBe(7);
    expect(services[0]!.requests.length + services[1]!.requests.length).toBe(7);
  });

  it('sends a host ten times slower at most a quarter of the requests under least-outstanding', async () => {
    const fast = await hosts(2, () => slowHost(5));
    const [slow] = await hosts(1, () => slowHost(50));
    const gw = await gatewayWith({ inference: [fast[0]!.url, slow!.url, fast[1]!.url] });
    const results = await load(200, 20, () => getModels(gw.url));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(slow!.requests.length).toBeLessThanOrEqual(50);
  });

  it('ejects a failing host, tries the one out longest when all are out, and takes a host back after recovery', async () => {
    const sickA = { sick: true };
    const sickB = { sick: true };
    const [a, b] = [await slowHost(0, sickA), await slowHost(0, sickB)];
    cleanups.push(() => a.close(), () => b.close());
    const gw = await gatewayWith({ inference: [a.url, b.url] }, { eject: { failures: 2, baseMs: 200, maxMs: 1000 }, retries: 0 });
    for (let i = 0; i < 4; i += 1) expect((await getModels(gw.url)).status).toBe(503);
    expect([a.requests.length, b.requests.length]).toEqual([2, 2]);
    // Both out: panic mode still sends each request (to the one out longest), answering the host's 503.
    const panic = await getModels(gw.url);
    expect(panic).toEqual({ status: 503, body: { error: { message: 'The server is overloaded.', type: 'server_error', param: null, code: 'overloaded' } } });
    expect(a.requests.length + b.requests.length).toBe(5);
    sickA.sick = false;
    sickB.sick = false;
    expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
  });

  it('keeps an ejected host out while the others answer, then takes it back', async () => {
    const state = { sick: true };
    const good = await slowHost(0);
    const flaky = await slowHost(0, state);
    cleanups.push(() => good.close(), () => flaky.close());
    const gw = await gatewayWith({ inference: [good.url, flaky.url] }, { eject: { failures: 1, baseMs: 300, maxMs: 300 } });
    for (let i = 0; i < 10; i += 1) expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
    // The first 503 took it out (and that GET was retried on the good host); none reached it since.
    expect(flaky.requests.length).toBe(1);
    const [goodTarget, flakyTarget] = [new URL(good.url).host, new URL(flaky.url).host];
    const ready = await fetch(`${gw.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(((await ready.json()) as { upstreams: unknown }).upstreams).toEqual({
      service: [{ target: new URL(gw.config.upstreams.service.url!).host, state: 'up', outstanding: 0 }],
      inference: [
        { target: goodTarget, state: 'up', outstanding: 0 },
        { target: flakyTarget, state: 'ejected', outstanding: 0, retryInMs: expect.any(Number) as number },
      ],
    });
    expect(await metricValue(gw.url, `tollgate_upstream_ejections_total{upstream="inference",target="${flakyTarget}"}`)).toBe(1);
    expect(await metricValue(gw.url, `tollgate_upstream_ejections_total{upstream="inference",target="${goodTarget}"}`)).toBe(0);
    expect(await metricValue(gw.url, `tollgate_upstream_target_up{upstream="inference",target="${flakyTarget}"}`)).toBe(0);
    expect(await metricValue(gw.url, `tollgate_upstream_target_up{upstream="inference",target="${goodTarget}"}`)).toBe(1);
    expect(await metricValue(gw.url, 'tollgate_upstream_retries_total{upstream="inference",reason="status"}')).toBe(1);
    expect(await metricValue(gw.url, 'tollgate_upstream_retries_total{upstream="inference",reason="connect"}')).toBe(0);
    state.sick = false;
    const deadline = Date.now() + 5000;
    while (flaky.requests.length < 2 && Date.now() < deadline) expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
    expect(flaky.requests.length).toBe(2);
    expect(await metricValue(gw.url, `tollgate_upstream_target_up{upstream="inference",target="${flakyTarget}"}`)).toBe(1);
  });

  it('moves to the targets of a reload under load, requests in flight finishing where they were', async () => {
    const [a, b, c] = await hosts(3, () => slowHost(2));
    const service = await startTrainingService();
    cleanups.push(() => service.close());
    const databasePath = tempDatabasePath();
    const yaml = (targets: FakeUpstream[]) => `
server: { host: 127.0.0.1, port: 0, shutdownGraceMs: 2000 }
upstreams:
  service: { url: "${service.url}", timeoutMs: 2000 }
  inference: { targets: ${JSON.stringify(targets.map((h) => ({ url: h.url })))}, timeoutMs: 2000 }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)}, admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} } }
database: { path: "${databasePath}" }
logging: { level: silent }
`;
    const path = writeTempConfig(yaml([a!, b!]));
    const gw = await startGateway(loadConfig(path), path);
    cleanups.push(() => gw.close());
    let reloaded: Promise<Response> | undefined;
    let reloadAnswered = false;
    const results = await load(
      200,
      10,
      async () => {
        const afterReload = reloadAnswered;
        const res = await fetch(`${gw.url}/v1/models`, { headers: auth });
        await res.arrayBuffer();
        return { status: res.status, id: res.headers.get('x-request-id') ?? '', afterReload };
      },
      (done) => {
        if (done !== 80) return;
        writeFileSync(path, yaml([b!, c!]));
        reloaded = fetch(`${gw.url}/admin/config/reload`, { method: 'POST', headers: { authorization: bearer(KEYS.admin) } }).then((res) => {
          reloadAnswered = true;
          return res;
        });
      },
    );
    expect((await reloaded)!.status).toBe(200);
    expect(results.filter((r) => r.status !== 200)).toEqual([]);
    // A request sent once the reload answered never went to the removed target; the added one took its share.
    const onA = new Set(a!.requests.map((r) => String(r.headers['x-request-id'])));
    const sentAfter = results.filter((r) => r.afterReload);
    expect(sentAfter.length).toBeGreaterThan(50);
    expect(sentAfter.filter((r) => onA.has(r.id))).toEqual([]);
    expect(a!.requests.length).toBeGreaterThan(0);
    expect(c!.requests.length).toBeGreaterThan(0);
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: { inference: { target: string }[] } };
    expect(ready.upstreams.inference.map((t) => t.target)).toEqual([new URL(b!.url).host, new URL(c!.url).host]);
    expect(await metricValue(gw.url, `tollgate_upstream_target_up{upstream="inference",target="${new URL(a!.url).host}"}`)).toBeNaN();
  });

  it('counts a target answering garbage (not HTTP) as failing: GETs go elsewhere and it is ejected', async () => {
    const garbage = createServer((socket) => {
      socket.on('error', () => undefined);
      socket.once('data', () => socket.end('SSH-2.0-OpenSSH_9.6\r\n\r\n'));
    });
    garbage.listen(0, '127.0.0.1');
    await once(garbage, 'listening');
    cleanups.push(() => new Promise<void>((resolve) => garbage.close(() => resolve())));
    const garbageTarget = `127.0.0.1:${(garbage.address() as AddressInfo).port}`;
    const [good] = await hosts(1, () => slowHost(0));
    const gw = await gatewayWith({ inference: [`http://${garbageTarget}`, good!.url] });
    for (let i = 0; i < 10; i += 1) expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
    expect(await metricValue(gw.url, `tollgate_upstream_ejections_total{upstream="inference",target="${garbageTarget}"}`)).toBe(1);
    expect(await metricValue(gw.url, 'tollgate_upstream_retries_total{upstream="inference",reason="reset"}')).toBe(3);
  });

  it('takes a target out on a failed active health check before any request fails, and back when it passes', async () => {
    const state = { sick: true };
    const good = await slowHost(0);
    const sick = await slowHost(0, state);
    cleanups.push(() => good.close(), () => sick.close());
    const gw = await gatewayWith({ inference: [good.url, sick.url] }, { healthCheck: { path: '/v1/health', intervalMs: 20, timeoutMs: 500 } });
    const sickTarget = new URL(sick.url).host;
    const stateOf = async () =>
      ((await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: { inference: { target: string; state: string }[] } }).upstreams.inference.find((t) => t.target === sickTarget)?.state;
    await eventually(async () => (await stateOf()) === 'ejected');
    for (let i = 0; i < 6; i += 1) expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
    expect(sick.requests.filter((r) => r.url === '/v1/models')).toEqual([]);
    expect(sick.requests.every((r) => r.url === '/v1/health')).toBe(true);
    expect(await metricValue(gw.url, `tollgate_upstream_ejections_total{upstream="inference",target="${sickTarget}"}`)).toBe(1);
    state.sick = false;
    await eventually(async () => (await stateOf()) === 'up');
    await eventually(async () => {
      expect(await getModels(gw.url)).toEqual({ status: 200, body: MODEL_LIST });
      return sick.requests.some((r) => r.url === '/v1/models');
    });
  });
});
