import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BufferBudget, readBody, type BufferedRequest } from '../../../src/proxy/index.js';

const SHARED_ABOVE = 128 * 1024;

/**
 * readBody over real HTTP: a body larger than sharedAbove ends in shared memory, filled chunk by
 * chunk as it arrives — no whole-body copy on the event loop at its end (Buffer.concat), and none
 * for the chat worker, which reads shared memory as it is (the 66–77 ms stall of issue 43).
 */
describe('readBody: large bodies in shared memory', () => {
  let server: Server;
  let url: string;
  const budget = new BufferBudget(64 * 1024 ** 2);
  const read: Array<(body: BufferedRequest) => void> = [];
  beforeAll(async () => {
    server = createServer((req: IncomingMessage, res) => {
      void readBody(req, { limit: 10 * 1024 ** 2, idleMs: 5000, budget, sharedAbove: SHARED_ABOVE }).then((body) => {
        read.shift()!(body);
        body.release();
        res.end();
      });
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => server.close());

  async function send(body: Buffer, chunked: boolean): Promise<Buffer> {
    const got = new Promise<BufferedRequest>((resolve) => read.push(resolve));
    const req = request(url, { method: 'POST', headers: chunked ? {} : { 'content-length': body.length } });
    if (chunked) for (let at = 0; at < body.length; at += 100_000) req.write(body.subarray(at, at + 100_000));
    req.end(chunked ? undefined : body);
    const [res] = (await once(req, 'response')) as [IncomingMessage];
    res.resume();
    return (await got).bytes;
  }

  const bytesOf = (size: number): Buffer => Buffer.from(Array.from({ length: size }, (_, i) => (i * 31) % 251));

  it.each([
    ['declared', false],
    ['chunked', true],
  ])('reads a 3 MB %s body into shared memory, byte for byte', async (_name, chunked) => {
    const body = bytesOf(3 * 1024 ** 2 + 7);
    const bytes = await send(body, chunked);
    expect([bytes.buffer instanceof SharedArrayBuffer, bytes.length, bytes.equals(body)]).toEqual([true, body.length, true]);
    expect(budget.used).toBe(0);
  });

  it.each([
    ['declared', false],
    ['chunked', true],
  ])('keeps an ordinary %s body in ordinary memory', async (_name, chunked) => {
    const body = bytesOf(SHARED_ABOVE);
    const bytes = await send(body, chunked);
    expect([bytes.buffer instanceof SharedArrayBuffer, bytes.equals(body)]).toEqual([false, true]);
  });
});
