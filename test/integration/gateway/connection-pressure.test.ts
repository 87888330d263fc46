import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { MODEL_LIST, startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService } from '../../fixtures/training-service.js';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig, type GatewayProcess } from '../../helpers/process.js';
import { openHeldChat } from '../../helpers/raw-http.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const auth = { authorization: bearer(KEYS.teamA) };
const MODELS_BODY = JSON.stringify(MODEL_LIST);

/** A client connection: what it received, a promise of its close, and the gateway's side of it. */
interface RawConnection {
  readonly name: string;
  readonly socket: Socket;
  readonly serverSide: Socket;
  received(): string;
  readonly closed: Promise<RawConnection>;
}

/** Connects to the in-process gateway and resolves once the gateway has accepted the connection. */
async function accepted(stack: Stack, name: string): Promise<RawConnection> {
  const acceptedByGateway = once(stack.gw.server, 'connection') as Promise<[Socket]>;
  const socket = connect(stack.gw.port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const [serverSide] = await acceptedByGateway;
  const connection: RawConnection = { name, socket, serverSide, received: () => received, closed: once(socket, 'close').then(() => connection) };
  return connection;
}

/** A connection that has been served one GET /v1/models and now waits, kept alive. */
async function idleKeepAlive(stack: Stack, name: string): Promise<RawConnection> {
  const connection = await accepted(stack, name);
  connection.socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\nConnection: keep-alive\r\n\r\n`);
  while (!connection.received().endsWith(MODELS_BODY)) await once(connection.socket, 'data');
  return connection;
}

/** Which of `connections` the gateway closes next. */
function nextClosed(connections: readonly RawConnection[]): Promise<string> {
  return Promise.race(connections.map((c) => c.closed)).then((c) => c.name);
}

/** Resolves when the gateway has closed its side of every one of these connections. */
async function goneFromGateway(sockets: readonly Socket[]): Promise<void> {
  await Promise.all(sockets.map((s) => (s.closed ? undefined : once(s, 'close'))));
}

interface Busy {
  readonly serverSide: Socket;
  /** Lets the request finish; resolves with what its client received. */
  finish(): Promise<{ status: number; body: string }>;
}

/** A POST /v1/preview/models/m-1/log on a connection of its own, its body still arriving. */
async function uploadInProgress(stack: Stack): Promise<Busy> {
  const body = '{"split":"train","trajectory_groups":[]}';
  const started = once(stack.gw.server, 'request') as Promise<[IncomingMessage]>;
  const req = httpRequest({
    host: '127.0.0.1',
    port: stack.gw.port,
    path: '/v1/preview/models/m-1/log',
    method: 'POST',
    agent: false,
    headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), connection: 'close' },
  });
  req.on('error', () => undefined);
  req.write(body.slice(0, 10));
  const [gatewayReq] = await started;
  return {
    serverSide: gatewayReq.socket,
    async finish() {
      req.end(body.slice(10));
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      return { status: res.statusCode ?? 0, body: await text(res) };
    },
  };
}

/** A streamed chat completion the upstream holds after its first event. */
async function streamInProgress(stack: Stack): Promise<Busy> {
  const started = once(stack.gw.server, 'request') as Promise<[IncomingMessage]>;
  // Connection: close keeps the global agent's pool empty: no later request reuses a closed socket.
  const chat = await openHeldChat(stack.gw.port, { ...auth, connection: 'close' }, CHAT, stack.service);
  const [gatewayReq] = await started;
  return {
    serverSide: gatewayReq.socket,
    async finish() {
      const body = text(chat.res);
      for (const event of chat.held.rest) chat.held.res.write(event);
      chat.held.res.end();
      return { status: chat.res.statusCode ?? 0, body: await body };
    },
  };
}

async function text(res: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of res) body += (chunk as Buffer).toString();
  return body;
}

/** Finishes the busy requests, closes the connections, and reads /metrics once the gateway holds none of them. */
async function metricsAfter(stack: Stack, busy: readonly Busy[], connections: readonly RawConnection[]): Promise<string> {
  for (const b of busy) {
    const { status, body } = await b.finish();
    expect(status).toBe(200);
    expect(body === '{}' || body.endsWith('data: [DONE]\n\n')).toBe(true);
  }
  for (const c of connections) c.socket.destroy();
  await goneFromGateway([...busy, ...connections].map((c) => c.serverSide));
  return (await fetch(`${stack.gw.url}/metrics`, { headers: { connection: 'close' } })).text();
}

const CHAT = JSON.stringify({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }], stream: true });

describe('at server.maxConnections', () => {
  let stack: Stack;
  beforeAll(async () => {
    // No pressure sweep in these tests: only the cap closes connections.
    stack = await startStack({ server: { maxConnections: 5, pressureHeadersTimeoutMs: 600_000 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('closes the connection that has waited longest for a new one: idle keep-alive first, then ones without a request; never a busy one', async () => {
    const upload = await uploadInProgress(stack);
    const stream = await streamInProgress(stack);
    const silent = await accepted(stack, 'silent');
    const keepAlive1 = await idleKeepAlive(stack, 'keep-alive 1');
    const keepAlive2 = await idleKeepAlive(stack, 'keep-alive 2');

    const order: string[] = [];
    const newcomers: RawConnection[] = [];
    for (let i = 1; i <= 4; i++) {
      const candidates = [silent, keepAlive1, keepAlive2, ...newcomers].filter((c) => !order.includes(c.name));
      const closing = nextClosed(candidates);
      newcomers.push(await accepted(stack, `new ${i}`));
      order.push(await closing);
    }
    expect(order).toEqual(['keep-alive 1', 'keep-alive 2', 'silent', 'new 1']);
    // What the closed clients saw: their answered request, if any, then the end of the connection.
    expect(keepAlive1.received()).toMatch(/^HTTP\/1\.1 200 OK\r\n/);
    expect(keepAlive1.received().endsWith(`\r\n\r\n${MODELS_BODY}`)).toBe(true);
    expect(silent.received()).toBe('');

    // The slow upload and the long stream were never candidates: both finish whole.
    expect(await upload.finish()).toEqual({ status: 200, body: '{}' });
    const streamed = await stream.finish();
    expect(streamed.status).toBe(200);
    expect(streamed.body.startsWith('data: {')).toBe(true);
    expect(streamed.body.endsWith('data: [DONE]\n\n')).toBe(true);

    const metrics = await metricsAfter(stack, [], [silent, keepAlive1, keepAlive2, ...newcomers]);
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="cap_idle"} 2\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="cap_headers"} 2\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="pressure_idle"} 0\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="pressure_headers"} 0\n');
    expect(metrics).toContain('tollgate_connections_refused_total 0\n');
    expect(metrics).toContain('tollgate_client_connections_max 5\n');
  });

  it('refuses a new connection only when every open one is busy', async () => {
    const busy = [await uploadInProgress(stack), await uploadInProgress(stack), await uploadInProgress(stack)];
    busy.push(await streamInProgress(stack), await streamInProgress(stack));

    const refused = await accepted(stack, 'refused');
    await refused.closed;
    expect(refused.received()).toBe('');

    const metrics = await metricsAfter(stack, busy, [refused]);
    expect(metrics).toContain('tollgate_connections_refused_total 1\n');
  });
});

describe('under pressure (80% of server.maxConnections open)', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { maxConnections: 10, pressureHeadersTimeoutMs: 200 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('closes the idle keep-alive connections and those without a request after pressureHeadersTimeoutMs; not busy ones', async () => {
    const upload = await uploadInProgress(stack);
    const stream = await streamInProgress(stack);
    const keepAlive = await idleKeepAlive(stack, 'keep-alive');
    const silent: RawConnection[] = [];
    for (let i = 0; i < 5; i++) silent.push(await accepted(stack, `silent ${i}`));

    // 8 of 10 open: every connection waiting now is closed once it has waited 200 ms.
    await Promise.all([keepAlive, ...silent].map((c) => c.closed));
    for (const c of silent) expect(c.received()).toBe('');
    expect(keepAlive.received().endsWith(`\r\n\r\n${MODELS_BODY}`)).toBe(true);

    expect(await upload.finish()).toEqual({ status: 200, body: '{}' });
    expect((await stream.finish()).body.endsWith('data: [DONE]\n\n')).toBe(true);
    const metrics = await metricsAfter(stack, [], [keepAlive, ...silent]);
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="pressure_idle"} 1\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="pressure_headers"} 5\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="cap_idle"} 0\n');
    expect(metrics).toContain('tollgate_connections_evicted_total{reason="cap_headers"} 0\n');
  });
});

describe('a flood of 1,100 sockets that send nothing, against 1,024 open files', () => {
  const cleanups: Array<() => Promise<void> | void> = [];
  let proc: GatewayProcess;
  let port: number;
  /** Ends the retry loop of a test that timed out. */
  let over = false;
  beforeAll(async () => {
    const service = await startTrainingService();
    const inference = await startInferenceHost();
    port = await freePort();
    // headersTimeoutMs at its default (30 s): only pressure mode can let a client in sooner.
    const yaml = `server: { host: 127.0.0.1 }
upstreams: { service: { url: "${service.url}" }, inference: { url: "${inference.url}" } }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)} }
`;
    proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port) }, ['prlimit', '--nofile=1024:1024']);
    cleanups.push(async () => {
      proc.kill('SIGKILL');
      await proc.exited();
      await Promise.all([service.close(), inference.close()]);
    });
    await proc.waitFor('tollgate listening');
  });
  afterEach(() => {
    over = true;
  });
  afterAll(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** Opens sockets that never send a byte; resolves once each has connected or failed. */
  async function openSilentSockets(count: number): Promise<Socket[]> {
    const sockets = Array.from({ length: count }, () => {
      const socket = connect(port, '127.0.0.1');
      // The gateway closes or resets some of them: that is the point.
      socket.on('error', () => undefined);
      return socket;
    });
    cleanups.push(() => sockets.forEach((s) => s.destroy()));
    await Promise.all(sockets.map((socket) => Promise.race([once(socket, 'connect'), once(socket, 'close')])));
    return sockets;
  }

  /**
   * A keyed GET /v1/models on a fresh connection. A refused, reset or unanswered connection is
   * retried, as a client with a connect timeout would (a connection the gateway never takes
   * up would otherwise hang the attempt).
   */
  async function servedModels(): Promise<Response> {
    for (;;) {
      if (over) throw new Error('the test ended before the client was served');
      try {
        return await fetch(`http://127.0.0.1:${port}/v1/models`, { headers: { ...auth, connection: 'close' }, signal: AbortSignal.timeout(3000) });
      } catch {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  }

  // The bound is the test timeout: without pressure mode the client waits for headersTimeoutMs (30 s).
  it('does not keep a keyed client out: it is served while the flood is still connected', { timeout: 20_000 }, async () => {
    await openSilentSockets(1100);
    const res = await servedModels();

    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(await res.json()).toEqual(MODEL_LIST);
    expect(proc.child.exitCode).toBeNull();
  });
});
