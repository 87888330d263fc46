import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RecordedRequest } from '../../fixtures/training-service.js';
import { startStack } from '../../helpers/gateway.js';
import { KEYS } from '../../helpers/keys.js';

/**
 * Every example of docs/clients.md (docs/examples/*, included verbatim: test/unit/tooling/docs.test.ts)
 * runs here as a user would run it, against a gateway in front of the fixture upstreams. With
 * `identityHeaders` on, each upstream request shows what the gateway admitted: the key's team and
 * the project the example asked for. An example that no longer works, or that lands on the key's
 * default project, fails here.
 */
const run = promisify(execFile);
const examples = join(import.meta.dirname, '..', '..', '..', 'docs', 'examples');
const python = await run('python3', ['-c', 'import openai, langchain_openai']).then(() => true, () => false);

type Stack = Awaited<ReturnType<typeof startStack>>;

describe('the client examples of docs/clients.md', () => {
  let stack: Stack;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    stack = await startStack({
      upstreams: { service: { identityHeaders: true }, inference: { identityHeaders: true } },
      routes: [
        { path: '/v1/training/runs', methods: ['POST'], upstream: 'service', body: 'json' },
        { path: '/v1/training/capabilities', methods: ['GET'], upstream: 'service', body: 'none' },
      ],
    });
    // Only what the examples read: no OPENAI_* of the machine leaks into them.
    env = { PATH: process.env.PATH, HOME: process.env.HOME, TOLLGATE_URL: stack.gw.url, TOLLGATE_KEY: KEYS.teamA };
  });
  afterAll(async () => {
    await stack.close();
  });

  /** Runs one example; answers its stdout and the requests the training service received meanwhile. */
  async function runExample(command: string, file: string): Promise<{ stdout: string; seen: RecordedRequest[] }> {
    const before = stack.service.requests.length;
    const { stdout } = await run(command, [join(examples, file)], { env, timeout: 20_000 });
    return { stdout, seen: stack.service.requests.slice(before) };
  }

  const admitted = (seen: RecordedRequest[]): unknown[] =>
    seen.map((r) => ({ route: `${r.method} ${r.url.split('?')[0]!.replace(/(models|runs)\/[^/]+/, '$1/{id}')}`, team: r.headers['x-tollgate-team'], project: r.headers['x-tollgate-project'], header: r.headers['openai-project'] }));
  const asTeamAProd = (...routes: string[]): unknown[] => routes.map((route) => ({ route, team: 'team-a', project: 'prod', header: 'team-a/prod' }));

  it('openai.mjs: the openai JS client with project: reaches the service as team-a/prod', async () => {
    const { stdout, seen } = await runExample('node', 'openai.mjs');
    expect(stdout).toBe('The loss went down.\n');
    expect(admitted(seen)).toEqual(asTeamAProd('POST /v1/chat/completions'));
  });

  it('vercel-ai.mjs: the Vercel AI SDK with createOpenAI({ project }) and .chat()', async () => {
    const { stdout, seen } = await runExample('node', 'vercel-ai.mjs');
    expect(stdout).toBe('The loss went down.\n');
    expect(admitted(seen)).toEqual(asTeamAProd('POST /v1/chat/completions'));
  });

  it('langchain.mjs: LangChain JS ChatOpenAI with configuration.defaultHeaders', async () => {
    const { stdout, seen } = await runExample('node', 'langchain.mjs');
    expect(stdout).toBe('The loss went down.\n');
    expect(admitted(seen)).toEqual(asTeamAProd('POST /v1/chat/completions'));
  });

  it('training-preview.mjs: the /v1/preview training API through the openai client', async () => {
    const { stdout, seen } = await runExample('node', 'training-preview.mjs');
    expect(stdout).toMatch(/^[0-9a-f-]{36} \d+\n$/);
    expect(admitted(seen)).toEqual(asTeamAProd('POST /v1/preview/models', 'GET /v1/preview/models/{id}/checkpoints'));
  });

  it('training-runs.mjs: the newer /v1/training API through config routes', async () => {
    const { stdout, seen } = await runExample('node', 'training-runs.mjs');
    expect(JSON.parse(stdout)).toMatchObject({ object: 'training.run' });
    expect(admitted(seen)).toEqual(asTeamAProd('GET /v1/training/capabilities', 'POST /v1/training/runs'));
  });

  it('curl.sh: a chat completion and a training model with curl', async () => {
    const { stdout, seen } = await runExample('sh', 'curl.sh');
    const [chat, model] = stdout.trim().split('\n').map((line) => JSON.parse(line) as { choices?: { message: { content: string } }[]; id?: string });
    expect(chat?.choices?.[0]?.message.content).toBe('The loss went down.');
    expect(model?.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(admitted(seen)).toEqual(asTeamAProd('POST /v1/chat/completions', 'POST /v1/preview/models'));
  });

  it('a client that sends no project (LangChain Python with only OPENAI_PROJECT set) lands silently on the key\'s default project', async () => {
    const before = stack.service.requests.length;
    const client = new OpenAI({ baseURL: `${stack.gw.url}/v1`, apiKey: KEYS.teamA, maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.choices[0]?.message.content).toBe('The loss went down.');
    expect(admitted(stack.service.requests.slice(before))).toEqual([{ route: 'POST /v1/chat/completions', team: 'team-a', project: 'default', header: undefined }]);
  });

  for (const file of ['openai.py', 'langchain.py', 'training.py']) {
    const reason = 'skipped: python3 cannot import openai and langchain_openai here (no PyPI; Debian bookworm has no python3-openai)';
    it.skipIf(!python)(`${file}: the Python example reaches the service as team-a/prod${python ? '' : ` (${reason})`}`, async () => {
      const { seen } = await runExample('python3', file);
      expect(seen.length).toBeGreaterThan(0);
      for (const request of admitted(seen)) expect(request).toMatchObject({ team: 'team-a', project: 'prod', header: 'team-a/prod' });
    });
  }
});
