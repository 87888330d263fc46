import { once } from 'node:events';
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createResponseTap, forceStreamUsage, type TapResult } from '../../../src/metering/index.js';
import { CHAT_COMPLETION, MODEL, USAGE, upstreamStream } from '../../unit/metering/chat-fixtures.js';

const readBody = async (req: IncomingMessage): Promise<Buffer> => {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
};

const portOf = (server: Server): number => (server.address() as AddressInfo).port;

/** The fake training service: records what it got, answers SSE in small writes (or JSON). */
let upstreamBodies: Buffer[] = [];
const upstream = createServer((req, res) => {
  void readBody(req).then((body) => {
    upstreamBodies.push(body);
    const parsed = JSON.parse(body.toString()) as { stream?: boolean };
    if (!parsed.stream) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(CHAT_COMPLETION));
      return;
    }
    const sse = Buffer.from(upstreamStream().full);
    res.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8' });
    for (let at = 0; at < sse.length; at += 37) res.write(sse.subarray(at, at + 37));
    res.end();
  });
});

/** A minimal relay wired the way the proxy wires metering: force usage, tap every chunk. */
let metered: TapResult[] = [];
const relay = createServer((req, res) => {
  void readBody(req).then((raw) => {
    const { bytes, forced } = forceStreamUsage(raw, JSON.parse(raw.toString()) as Record<string, unknown>);
    const headers = { 'content-type': 'application/json', 'content-length': String(bytes.length) };
    const upstreamReq = request({ port: portOf(upstream), host: '127.0.0.1', method: 'POST', path: req.url, headers }, (up) => {
      const tap = createResponseTap(up.headers['content-type'], { dropUsageChunk: forced });
      res.writeHead(up.statusCode ?? 502, { 'content-type': up.headers['content-type'] ?? 'application/octet-stream' });
      up.on('data', (chunk: Buffer) => {
        const out = tap.write(chunk);
        if (out.length > 0) res.write(out);
      });
      up.on('end', () => {
        const result = tap.end();
        metered.push(result);
        res.end(result.tail ?? undefined);
      });
    });
    upstreamReq.end(bytes);
  });
});

let client: OpenAI;
const messages = [{ role: 'user' as const, content: 'Say hello to the RL team' }];

beforeAll(async () => {
  await Promise.all([once(upstream.listen(0, '127.0.0.1'), 'listening'), once(relay.listen(0, '127.0.0.1'), 'listening')]);
  client = new OpenAI({ baseURL: `http://127.0.0.1:${portOf(relay)}/v1`, apiKey: 'sk-test', maxRetries: 0 });
});

afterAll(async () => {
  upstream.close();
  relay.close();
  await Promise.all([once(upstream, 'close'), once(relay, 'close')]);
});

beforeEach(() => {
  upstreamBodies = [];
  metered = [];
});

describe('metering a chat stream end to end (openai SDK client)', () => {
  it('meters a stream the client did not ask usage for, without the client seeing the usage chunk', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? null)).toEqual(['', 'Hello', ' there!']);
    expect(chunks.every((c) => c.usage === null)).toBe(true);
    expect(metered).toEqual([{ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 2, completionBytes: 12 }]);
    const sent = upstreamBodies[0]!.toString();
    expect(sent.startsWith('{"stream_options":{"include_usage":true},')).toBe(true);
    expect(JSON.parse(sent)).toEqual({ stream_options: { include_usage: true }, model: MODEL, messages, stream: true });
  });

  it('relays the usage chunk and the request bytes unchanged when the client asked for usage', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } });
    const chunks = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks).toHaveLength(4);
    expect(chunks[3]).toMatchObject({ choices: [], usage: USAGE });
    expect(metered).toEqual([{ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 2, completionBytes: 12 }]);
    expect(JSON.parse(upstreamBodies[0]!.toString())).toEqual({ model: MODEL, messages, stream: true, stream_options: { include_usage: true } });
  });

  it('meters a non-stream reply', async () => {
    const reply = await client.chat.completions.create({ model: MODEL, messages });
    expect(reply.usage).toEqual(USAGE);
    expect(metered).toEqual([{ tail: null, usage: USAGE, invalidUsage: false, model: MODEL, contentChunks: 0, completionBytes: 0 }]);
  });
});
