import { once } from 'node:events';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { streamEvents } from '../../fixtures/training-service.js';
import { openHeldChat } from '../../helpers/raw-http.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const auth = { authorization: bearer(KEYS.teamA) };
const MODEL = 'wandb-artifact:///acme/rl-agents/qwen-grpo:step40';

describe('chat completions', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const post = (body: string, contentType = 'application/json') =>
    request(stack.gw.url).post('/v1/chat/completions').set(auth).set('content-type', contentType).send(body);

  it('forwards the original bytes, not a re-serialisation', async () => {
    const body = `{ "messages" : [ {"role":"user","content":"héllo \\u00e9 1.0"} ],\n  "model":"${MODEL}", "top_k": 20, "min_p": 0.05,"temperature":1.0 }`;
    const res = await post(body);
    expect(res.status).toBe(200);
    expect(stack.service.last.body.toString('utf8')).toBe(body);
    expect(stack.service.last.headers['content-length']).toBe(String(Buffer.byteLength(body)));
    expect(res.body.object).toBe('chat.completion');
    // Metering reads a JSON reply without changing it, so its Content-Length is kept.
    expect(res.headers['content-length']).toBe(String(Buffer.byteLength(res.text)));
    expect(res.body.usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  });

  const detail = (items: unknown[]) => JSON.stringify({ detail: items });
  const cases: Array<[string, string, string, string?]> = [
    ['no body', '', detail([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])],
    ['JSON null', 'null', detail([{ type: 'missing', loc: ['body'], msg: 'Field required', input: null }])],
    ['invalid JSON', '{"model": "m",', detail([{ type: 'json_invalid', loc: ['body', 14], msg: 'JSON decode error', input: {}, ctx: { error: 'Expecting property name enclosed in double quotes' } }])],
    ['an array body', '[1,2]', detail([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: [1, 2] }])],
    ['a string body', '"hi"', detail([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: 'hi' }])],
    ['a number body', '42', detail([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: 42 }])],
    [
      'a text/plain body',
      '{"model":"m","messages":[]}',
      detail([{ type: 'model_attributes_type', loc: ['body'], msg: 'Input should be a valid dictionary or object to extract fields from', input: '{"model":"m","messages":[]}' }]),
      'text/plain',
    ],
    ['model missing', '{"messages":[]}', detail([{ type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: { messages: [] } }])],
    ['messages missing', '{"model":"m"}', detail([{ type: 'missing', loc: ['body', 'messages'], msg: 'Field required', input: { model: 'm' } }])],
    ['model not a string', '{"model":7,"messages":[]}', detail([{ type: 'string_type', loc: ['body', 'model'], msg: 'Input should be a valid string', input: 7 }])],
    ['messages not an array', '{"model":"m","messages":{"role":"user"}}', detail([{ type: 'list_type', loc: ['body', 'messages'], msg: 'Input should be a valid list', input: { role: 'user' } }])],
    [
      'message items not objects',
      '{"model":"m","messages":[{"role":"user"},"hi",3]}',
      detail([
        { type: 'dict_type', loc: ['body', 'messages', 1], msg: 'Input should be a valid dictionary', input: 'hi' },
        { type: 'dict_type', loc: ['body', 'messages', 2], msg: 'Input should be a valid dictionary', input: 3 },
      ]),
    ],
    [
      'both fields missing, in field order',
      '{}',
      detail([
        { type: 'missing', loc: ['body', 'model'], msg: 'Field required', input: {} },
        { type: 'missing', loc: ['body', 'messages'], msg: 'Field required', input: {} },
      ]),
    ],
  ];

  it.each(cases)('answers 422 for %s with the FastAPI body, and forwards nothing', async (_name, body, expected, contentType) => {
    const before = stack.service.requests.length;
    const res = await post(body, contentType);
    expect(res.status).toBe(422);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.text).toBe(expected);
    expect(stack.service.requests.length).toBe(before);
  });

  it('checks auth (401) and the project header (400) before the body', async () => {
    const noKey = await request(stack.gw.url).post('/v1/chat/completions').set('content-type', 'application/json').send('{');
    expect(noKey.status).toBe(401);
    const badProject = await request(stack.gw.url).post('/v1/chat/completions').set(auth).set('OpenAI-Project', 'nope').set('content-type', 'application/json').send('{');
    expect(badProject.status).toBe(400);
  });

  it('relays an SSE stream chunk by chunk, before the upstream has finished', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'count' }], stream: true, stream_options: { include_usage: true } });
    const { res, held } = await openHeldChat(stack.gw.port, auth, body, stack.service);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    const [first] = (await once(res, 'data')) as [Buffer];
    const expected = streamEvents(MODEL, 3, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(first.toString()).toBe(expected[0]);
    // The upstream is still holding the rest: the client already has the first event.
    let rest = '';
    res.on('data', (c: Buffer) => (rest += c.toString()));
    for (const event of held.rest) held.res.write(event);
    held.res.end();
    await once(res, 'end');
    expect(first.toString() + rest).toBe(expected.join(''));
  });

  it('adds include_usage upstream and removes the usage chunk from a stream that did not ask for it', async () => {
    const body = JSON.stringify({ model: MODEL, messages: [{ role: 'user', content: 'count' }], stream: true });
    const res = await post(body);
    expect(res.status).toBe(200);
    const upstreamBody = JSON.parse(stack.service.last.body.toString()) as Record<string, unknown>;
    expect(upstreamBody.stream_options).toEqual({ include_usage: true });
    const withUsage = streamEvents(MODEL, 3, { prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    const withoutUsageChunk = withUsage.filter((event) => !event.includes('"choices":[]'));
    expect(res.text).toBe(withoutUsageChunk.join(''));
  });
});
