import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';

/**
 * The openai npm client is the reference client: everything a user does with it through
 * Tollgate must work as it does against the platform directly.
 */
describe('the openai client through the gateway', () => {
  let stack: Stack;
  let client: OpenAI;
  beforeAll(async () => {
    // chat goes to the service, models to the inference host: both behind one gateway URL.
    stack = await startStack();
    client = new OpenAI({ apiKey: KEYS.teamA, baseURL: `${stack.gw.url}/v1`, project: 'team-a/rl-research', maxRetries: 0 });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('creates a chat completion and sends the project header', async () => {
    const completion = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'How is training going?' }] });
    expect(completion.choices[0]?.message.content).toBe('The loss went down.');
    expect(completion.usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    expect(stack.service.last.headers['openai-project']).toBe('team-a/rl-research');
  });

  it('streams a chat completion', async () => {
    const stream = await client.chat.completions.create({ model: MODEL, messages: [{ role: 'user', content: 'count' }], stream: true });
    const pieces: string[] = [];
    let sawUsageChunk = false;
    for await (const chunk of stream) {
      if (chunk.choices.length === 0) sawUsageChunk = true;
      const content = chunk.choices[0]?.delta.content;
      if (content) pieces.push(content);
    }
    expect(pieces.join('')).toBe('tok0 tok1 tok2 ');
    expect(sawUsageChunk).toBe(false);
  });

  it('streams with include_usage and receives the usage chunk', async () => {
    const stream = await client.chat.completions.create({
      model: MODEL,
      messages: [{ role: 'user', content: 'count' }],
      stream: true,
      stream_options: { include_usage: true },
    });
    let usage: unknown = null;
    for await (const chunk of stream) if (chunk.usage) usage = chunk.usage;
    expect(usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
  });

  it('lists models from the inference host', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toEqual(['OpenPipe/Qwen3-14B-Instruct', 'meta-llama/Llama-3.1-8B-Instruct']);
    expect(stack.inference.last.headers['openai-project']).toBe('team-a/rl-research');
  });

  it('raises AuthenticationError for a bad key', async () => {
    const bad = new OpenAI({ apiKey: 'tg-wrong', baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
    const error = await bad.models.list().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).status).toBe(401);
    expect((error as InstanceType<typeof OpenAI.AuthenticationError>).code).toBe('invalid_api_key');
  });

  it('raises UnprocessableEntityError for an invalid chat body', async () => {
    const error = await client.chat.completions
      .create({ model: 42 as unknown as string, messages: [{ role: 'user', content: 'x' }] })
      .catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.UnprocessableEntityError);
    // FastAPI bodies have no `error` key, so the client reports the status alone — exactly as
    // it does against the training service itself.
    const unprocessable = error as InstanceType<typeof OpenAI.UnprocessableEntityError>;
    expect(unprocessable.status).toBe(422);
    expect(unprocessable.message).toBe('422 status code (no body)');
    expect(unprocessable.requestID).toMatch(/^[0-9a-f-]{36}$/);
    expect(stack.service.requests.every((r) => !r.body.includes('"model":42'))).toBe(true);
  });

  it('raises PermissionDeniedError for a project of another team', async () => {
    const other = new OpenAI({ apiKey: KEYS.teamA, baseURL: `${stack.gw.url}/v1`, project: 'team-b/prod', maxRetries: 0 });
    const error = await other.models.list().catch((err: unknown) => err);
    expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
  });
});
