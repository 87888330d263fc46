import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { connect, type Socket } from 'node:net';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTrainingService } from '../../fixtures/training-service.js';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig } from '../../helpers/process.js';
import { eventually } from '../../helpers/wait.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const auth = { authorization: bearer(KEYS.teamA) };
const CHAT = '{"model":"OpenPipe/Qwen3-14B-Instruct","messages":[{"role":"user","content":"hello there"}]}';

/** A raw connection to the gateway, with everything it received and a promise of its close. */
function rawConnection(port: number): { socket: Socket; received: () => string; closed: Promise<void> } {
  const socket = connect(port, '127.0.0.1');
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  socket.on('error', () => undefined);
  const closed = once(socket, 'close').then(() => undefined);
  return { socket, received: () => received, closed };
}

describe('clients that stall', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { headersTimeoutMs: 600, bodyIdleTimeoutMs: 400 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('closes connections that send their headers one byte at a time, with 408, after headersTimeoutMs', async () => {
    const head = `GET /v1/models HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth.authorization}\r\n\r\n`;
    const slow = Array.from({ length: 20 }, () => rawConnection(stack.gw.port));
    const drips = slow.map(({ socket }) => {
      let i = 0;
      const timer = setInterval(() => (i < head.length ? socket.write(head[i++]!) : clearInterval(timer)), 100);
      return timer;
    });
    await Promise.all(slow.map((c) => c.closed));
    for (const timer of drips) clearInterval(timer);
    for (const c of slow) expect(c.received()).toMatch(/^HTTP\/1\.1 408 Request Timeout\r\n/);
    expect(stack.inference.requests).toHaveLength(0);
  });

  it('closes connections that send nothing at all', async () => {
    const idle = Array.from({ length: 20 }, () => rawConnection(stack.gw.port));
    await Promise.all(idle.map((c) => c.closed));
    expect(stack.inference.requests).toHaveLength(0);
  });

  it('answers 408 request_timeout and closes the connection when a chat body stops arriving; nothing is forwarded', async () => {
    const before = stack.service.requests.length;
    const req = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'content-length': 100 },
    });
    req.on('error', () => undefined);
    req.write('{"model":"');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let body = '';
    res.on('data', (chunk: Buffer) => (body += chunk.toString()));
    await once(res, 'end');
    expect(res.statusCode).toBe(408);
    expect(res.headers.connection).toBe('close');
    expect(JSON.parse(body)).toEqual({
      error: { message: 'The request body stopped arriving: no byte for 400 ms.', type: 'invalid_request_error', param: null, code: 'request_timeout' },
    });
    expect(stack.service.requests.length).toBe(before);
    req.destroy();
  });

  it('answers 408 when a streamed upload stops, and aborts the upstream request', async () => {
    const aborted = new Promise<void>((resolve) => stack.service.server.once('request', (upstreamReq: IncomingMessage) => upstreamReq.once('aborted', resolve)));
    const req = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/preview/models/m-1/log',
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'content-length': 1000 },
    });
    req.on('error', () => undefined);
    req.write('{"split":"train","trajectory_groups":[');
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    await once(res, 'end');
    expect(res.statusCode).toBe(408);
    await aborted;
    req.destroy();
  });
});

describe('a flood of idle connections against a 1,024 open-file limit', () => {
  it('keeps serving: idle connections are closed after headersTimeoutMs and the cap leaves descriptors for upstreams', async () => {
    const service = await startTrainingService();
    const port = await freePort();
    const yaml = `server: { host: 127.0.0.1, headersTimeoutMs: 1500 }
upstreams: { service: { url: "${service.url}" }, inference: { url: "${service.url}" } }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)} }
`;
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port) }, ['prlimit', '--nofile=1024:1024']);
    const flood: Socket[] = [];
    try {
      await proc.waitFor('tollgate listening');
      for (let i = 0; i < 1100; i++) {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        flood.push(socket);
      }
      // Served again once the idle ones are closed, and the upstream can still be reached.
      await eventually(async () => {
        const res = await fetch(`http://127.0.0.1:${port}/v1/health`, { headers: auth }).catch(() => undefined);
        return res?.status === 200;
      }, 20_000);
      expect(proc.child.exitCode).toBeNull();
      expect(service.requests.at(-1)?.url).toBe('/v1/health');
    } finally {
      for (const socket of flood) socket.destroy();
      proc.kill('SIGKILL');
      await proc.exited();
      await service.close();
    }
  });
});

describe('an upstream that goes silent mid-stream', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ upstreams: { service: { idleTimeoutMs: 300 } } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('is cut after idleTimeoutMs: the client sees a truncated stream and the error counts as kind="idle"', async () => {
    const req = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'x-fixture-mode': 'stream-hold' },
    });
    req.on('error', () => undefined);
    req.end(JSON.stringify({ model: 'm', messages: [], stream: true }));
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    let body = '';
    res.on('data', (chunk: Buffer) => (body += chunk.toString()));
    // events.once() would reject on the 'error' that comes first: listen for both plainly.
    const cut = new Promise<Error>((resolve) => res.once('error', resolve));
    await new Promise((resolve) => res.once('close', resolve));
    expect((await cut).message).toBe('aborted');
    expect(res.statusCode).toBe(200);
    // Cut, not ended: the client can tell the stream is incomplete.
    expect(res.complete).toBe(false);
    expect(body.startsWith('data: {')).toBe(true);
    expect(body).not.toContain('[DONE]');
    // The upstream side of the cut: the gateway closed its request.
    const held = await stack.service.nextHeld();
    await new Promise((resolve) => (held.res.destroyed ? resolve(undefined) : held.res.once('close', resolve)));
    const metrics = await request(stack.gw.url).get('/metrics');
    expect(metrics.text).toContain('tollgate_upstream_errors_total{upstream="service",kind="idle"} 1');
  });
});

describe('client forwarding headers', () => {
  const spoofed = {
    forwarded: 'for=6.6.6.6;proto=https',
    'x-forwarded-for': '6.6.6.6',
    'x-forwarded-host': 'evil.example',
    'x-real-ip': '6.6.6.6',
    'true-client-ip': '6.6.6.6',
    'cf-connecting-ip': '6.6.6.6',
  };

  it('are all dropped without trustProxy; the gateway sets its own X-Forwarded-*', async () => {
    const stack = await startStack();
    try {
      await request(stack.gw.url).get('/v1/models').set(auth).set(spoofed).expect(200);
      const sent = stack.inference.last.headers;
      for (const name of ['forwarded', 'x-real-ip', 'true-client-ip', 'cf-connecting-ip']) expect(sent[name]).toBeUndefined();
      expect(sent['x-forwarded-for']).toBe('127.0.0.1');
      expect(sent['x-forwarded-host']).toBe(`127.0.0.1:${stack.gw.port}`);
    } finally {
      await stack.close();
    }
  });

  it('are kept with trustProxy: true (X-Forwarded-For appended to)', async () => {
    const stack = await startStack({ server: { trustProxy: true } });
    try {
      await request(stack.gw.url).get('/v1/models').set(auth).set(spoofed).expect(200);
      const sent = stack.inference.last.headers;
      expect(sent.forwarded).toBe('for=6.6.6.6;proto=https');
      expect(sent['x-real-ip']).toBe('6.6.6.6');
      expect(sent['x-forwarded-for']).toBe('6.6.6.6,127.0.0.1');
    } finally {
      await stack.close();
    }
  });
});

describe('request header size', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  it('accepts 16 KB of headers (a large JWT would be refused by Node’s 16 KB default)', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set(auth).set('x-large-claim', 'a'.repeat(16 * 1024));
    expect(res.status).toBe(200);
  });

  it('answers 431 past server.maxHeaderBytes (60 KB)', async () => {
    const c = rawConnection(stack.gw.port);
    c.socket.write(`GET /v1/models HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(64 * 1024)}\r\n\r\n`);
    await c.closed;
    expect(c.received()).toMatch(/^HTTP\/1\.1 431 Request Header Fields Too Large\r\n/);
  });
});

describe('buffered chat bodies past server.maxBufferedBytes', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ server: { maxBufferedBytes: 150 } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('answer 503 overloaded with Retry-After while the budget is spent, and are served again once it frees', async () => {
    // One upload holds 100 of the 150 bytes while it trickles in.
    const holder = httpRequest({
      host: '127.0.0.1',
      port: stack.gw.port,
      path: '/v1/chat/completions',
      method: 'POST',
      headers: { ...auth, 'content-type': 'application/json', 'content-length': Buffer.byteLength(CHAT) },
    });
    holder.write(CHAT.slice(0, 60));
    await eventually(async () => (await request(stack.gw.url).get('/metrics')).text.includes('tollgate_buffered_body_bytes 60'));
    const refused = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').send(CHAT);
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('1');
    expect(refused.body).toEqual({
      error: {
        message: 'The gateway is holding as many request bodies as it may (server.maxBufferedBytes); retry shortly.',
        type: 'server_error',
        param: null,
        code: 'overloaded',
      },
    });
    holder.end(CHAT.slice(60));
    const [held] = (await once(holder, 'response')) as [IncomingMessage];
    held.resume();
    await once(held, 'end');
    expect(held.statusCode).toBe(200);
    await eventually(async () => (await request(stack.gw.url).get('/metrics')).text.includes('tollgate_buffered_body_bytes 0'));
    const served = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', 'application/json').send(CHAT);
    expect(served.status).toBe(200);
  });
});
