import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startChatUpstream, type ChatUpstream } from '../../fixtures/chat-upstream.js';
import { metricValue, startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';
const OTHER = 'acme/house-model';
const DEAD = 'dead/model';

const KEY_ENTRIES = [
  { id: 'team-a-bot', sha256: digest(KEYS.teamA), team: 'team-a', limits: { rpm: 1000 } },
  { id: 'team-b-bot', sha256: digest(KEYS.teamB), team: 'team-b' },
];

type Row = Record<string, unknown>;

describe('model routing: named upstreams, aliases, fallbacks (SPEC 22)', () => {
  let service: ChatUpstream;
  let inference: ChatUpstream;
  let vllm: ChatUpstream;
  let gw: RunningGateway;

  const chat = (key: string, body: string | Record<string, unknown>): Promise<Response> =>
    fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: bearer(key), 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const ask = (model: string, key: string = KEYS.teamA): Promise<Response> => chat(key, { model, messages: [{ role: 'user', content: 'hi' }] });
  const rows = async (team: string): Promise<Row[]> => {
    await gw.gateway.settled();
    const today = new Date().toISOString().slice(0, 10);
    const res = await fetch(`${gw.url}/admin/usage/requests?team=${team}&from=${today}&to=${today}`, { headers: { authorization: bearer(KEYS.admin) } });
    return ((await res.json()) as { data: Row[] }).data;
  };
  const rowOf = async (team: string, res: Response): Promise<Row> => (await rows(team)).find((row) => row.request_id === res.headers.get('x-request-id'))!;
  const counts = (): number[] => [service.chats().length, inference.chats().length, vllm.chats().length];

  beforeAll(async () => {
    [service, inference, vllm] = await Promise.all([
      startChatUpstream('service', undefined),
      startChatUpstream('inference', [LLAMA, QWEN]),
      startChatUpstream('vllm', [QWEN, 'OpenPipe/Qwen3-32B']),
    ]);
    const closedPort = await freePort();
    gw = await startGateway(
      testConfig(
        { service: service.host.url, inference: inference.host.url },
        {
          upstreams: { vllm: { url: vllm.host.url, timeoutMs: 2000 }, gone: { url: `http://127.0.0.1:${closedPort}`, timeoutMs: 2000, retries: 0 } },
          auth: { keys: KEY_ENTRIES, admin: { keys: ADMIN_ENTRIES } },
          teams: [{ id: 'team-b', models: ['OpenPipe/*', 'dead/*', 'acme/*'] }],
          routes: [{ path: '/v1/extra/status', methods: ['GET'], upstream: 'vllm', body: 'none', limited: false }],
          metering: { prices: { models: { [QWEN]: { prompt: 1, completion: 2 }, [LLAMA]: { prompt: 10, completion: 20 } } } },
          models: {
            routes: [
              { match: 'OpenPipe/*', upstream: 'vllm' },
              { match: 'meta-llama/*', upstream: 'inference' },
              { match: 'dead/*', upstream: 'gone' },
            ],
            aliases: { fast: QWEN, quick: 'fast', big: LLAMA },
            fallbacks: { [QWEN]: [LLAMA], [DEAD]: [QWEN], 'OpenPipe/Qwen3-32B': [QWEN, LLAMA] },
          },
        },
      ),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([service?.host.close(), inference?.host.close(), vllm?.host.close()]);
  });
  beforeEach(() => {
    for (const upstream of [service, inference, vllm]) upstream.mode = 'ok';
  });

  it('sends each chat to the upstream its model matches (first match; no match: service), and names the model in x-tollgate-model', async () => {
    const before = counts();
    const answers = await Promise.all([ask(QWEN), ask('OpenPipe/Qwen3-32B'), ask(LLAMA), ask(OTHER)]);
    expect(answers.map((res) => res.status)).toEqual([200, 200, 200, 200]);
    expect(answers.map((res) => res.headers.get('x-tollgate-model'))).toEqual([QWEN, 'OpenPipe/Qwen3-32B', LLAMA, OTHER]);
    expect(counts().map((n, i) => n - before[i]!)).toEqual([1, 1, 2]);
    // Counted under the upstream that served each chat, not the chat route's default (service).
    const served = (upstream: string) => metricValue(gw.url, `tollgate_requests_total{route="/v1/chat/completions",method="POST",upstream="${upstream}",status="200"}`);
    expect([await served('service'), await served('inference'), await served('vllm')]).toEqual([1, 1, 2]);
  });

  it('lists named upstreams in /readyz and in the upstream metrics', async () => {
    const ready = (await (await fetch(`${gw.url}/readyz`)).json()) as { upstreams: Record<string, Array<{ target: string }>> };
    expect(Object.keys(ready.upstreams)).toEqual(['service', 'inference', 'vllm', 'gone']);
    expect(ready.upstreams.vllm!.map((target) => target.target)).toEqual([new URL(vllm.host.url).host]);
    expect(await metricValue(gw.url, `tollgate_upstream_target_up{upstream="vllm",target="${new URL(vllm.host.url).host}"}`)).toBe(1);
    expect(await metricValue(gw.url, 'tollgate_upstream_errors_total{upstream="gone",kind="connect"}')).toBe(0);
  });

  it('sends a config route naming a named upstream there', async () => {
    const res = await fetch(`${gw.url}/v1/extra/status`, { headers: { authorization: bearer(KEYS.teamA) } });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ detail: 'Not Found' });
    expect(vllm.host.requests.at(-1)).toMatchObject({ method: 'GET', url: '/v1/extra/status' });
  });

  it('percent-encodes a model name that cannot be a header value in x-tollgate-model (UTF-8), and forwards it as sent', async () => {
    const res = await ask('modèle\u0000/ü');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tollgate-model')).toBe('mod%C3%A8le%00%2F%C3%BC');
    expect(JSON.parse(service.chats().at(-1)!.body.toString('utf8')).model).toBe('modèle\u0000/ü');
    const long = await ask(`${'é'.repeat(400)}\ud800`);
    expect(long.status).toBe(200);
    expect(long.headers.get('x-tollgate-model')).toBe('%C3%A9'.repeat(170));
  });

  it('forwards an alias as its target, every other byte as sent; the alias is read as Python reads the body (last duplicate key)', async () => {
    const sent = '{"model": "nope", "messages":[{"role":"user","content":"h\\u00e9 \\"model\\": x"}],  "temperature":1.50, "model" :"quick" , "n":1}';
    const res = await chat(KEYS.teamA, sent);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tollgate-model')).toBe(QWEN);
    expect(vllm.chats().at(-1)!.body.toString('utf8')).toBe(sent.replace('"quick"', `"${QWEN}"`));
    expect(await rowOf('team-a', res)).toMatchObject({ model: QWEN, requested_model: 'quick', fallback_from: null, status: 200 });
  });

  it('lists the merged upstream lists once each, filtered per caller, with the aliases the caller may use (root = the target)', async () => {
    const list = async (key: string): Promise<Array<{ id: string; root?: string }>> =>
      ((await (await fetch(`${gw.url}/v1/models`, { headers: { authorization: bearer(key) } })).json()) as { data: Array<{ id: string; root?: string }> }).data;
    const all = await list(KEYS.teamA);
    expect(all.map((model) => model.id)).toEqual([QWEN, 'OpenPipe/Qwen3-32B', LLAMA, 'fast', 'quick', 'big']);
    expect(all.filter((model) => model.id === 'fast' || model.id === 'quick').map((model) => model.root)).toEqual([QWEN, QWEN]);
    expect((await list(KEYS.teamB)).map((model) => model.id)).toEqual([QWEN, 'OpenPipe/Qwen3-32B', 'fast', 'quick']);
  });

  for (const mode of [429, 503] as const) {
    it(`serves a chat whose upstream answers ${mode} from the fallback: one ledger row, one charge at the fallback's price`, async () => {
      const first = await ask(OTHER);
      const remaining = Number(first.headers.get('x-ratelimit-remaining-requests'));
      vllm.mode = mode;
      const before = counts();
      const res = await ask('fast');
      expect(res.status).toBe(200);
      expect(res.headers.get('x-tollgate-model')).toBe(LLAMA);
      expect(((await res.json()) as { model: string }).model).toBe(LLAMA);
      // The limits were charged once: one request less than the one before.
      expect(Number(res.headers.get('x-ratelimit-remaining-requests'))).toBe(remaining - 1);
      expect(counts().map((n, i) => n - before[i]!)).toEqual([0, 1, 1]);
      expect(JSON.parse(inference.chats().at(-1)!.body.toString('utf8')).model).toBe(LLAMA);
      const mine = (await rows('team-a')).filter((row) => row.request_id === res.headers.get('x-request-id'));
      // 10 prompt and 4 completion tokens at the fallback's price (10 and 20 per million).
      expect(mine).toEqual([expect.objectContaining({ model: LLAMA, requested_model: 'fast', fallback_from: QWEN, status: 200, total_tokens: 14, cost: 0.00018 })]);
      expect(await metricValue(gw.url, `tollgate_model_fallbacks_total{from="${QWEN}",to="${LLAMA}",reason="${mode}"}`)).toBe(1);
    });
  }

  it('falls back from an upstream that cannot be reached (closed port)', async () => {
    const before = counts();
    const res = await ask(DEAD);
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tollgate-model')).toBe(QWEN);
    expect(counts().map((n, i) => n - before[i]!)).toEqual([0, 0, 1]);
    expect(await rowOf('team-a', res)).toMatchObject({ model: QWEN, requested_model: DEAD, fallback_from: DEAD, status: 200 });
    expect(await metricValue(gw.url, `tollgate_model_fallbacks_total{from="${DEAD}",to="${QWEN}",reason="connect"}`)).toBe(1);
  });

  it('never re-sends a chat to a target that received it: a fallback on the same one-target upstream is skipped', async () => {
    vllm.mode = 503;
    const before = counts();
    const res = await ask('OpenPipe/Qwen3-32B');
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tollgate-model')).toBe(LLAMA);
    expect(counts().map((n, i) => n - before[i]!)).toEqual([0, 1, 1]);
    expect(await metricValue(gw.url, `tollgate_model_fallbacks_total{from="OpenPipe/Qwen3-32B",to="${QWEN}",reason="503"}`)).toBeNaN();
    expect(await metricValue(gw.url, `tollgate_model_fallbacks_total{from="OpenPipe/Qwen3-32B",to="${LLAMA}",reason="503"}`)).toBe(1);
  });

  it('rewrites the model of a UTF-16 body and forwards it as UTF-8, the rest as sent', async () => {
    const text = '{"model":"fast","messages":[{"role":"user","content":"héllo"}]}';
    const res = await fetch(`${gw.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: bearer(KEYS.teamA), 'content-type': 'application/json' },
      body: Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]),
    });
    expect(res.status).toBe(200);
    expect(vllm.chats().at(-1)!.body.toString('utf8')).toBe(text.replace('"fast"', `"${QWEN}"`));
  });

  it('never falls back once a stream sent its first byte', async () => {
    vllm.mode = 'stream-break';
    const before = counts();
    const res = await chat(KEYS.teamA, { model: QWEN, messages: [{ role: 'user', content: 'hi' }], stream: true });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-tollgate-model')).toBe(QWEN);
    await res.text().catch(() => '');
    expect(counts().map((n, i) => n - before[i]!)).toEqual([0, 0, 1]);
  });

  it('does not fall back to a model the caller may not use: the upstream answer is relayed', async () => {
    vllm.mode = 503;
    const before = counts();
    const res = await ask(QWEN, KEYS.teamB);
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: { message: 'vllm is busy', type: 'server_error', param: null, code: null } });
    expect(res.headers.get('x-tollgate-model')).toBe(QWEN);
    expect(counts().map((n, i) => n - before[i]!)).toEqual([0, 0, 1]);
    expect(await rowOf('team-b', res)).toMatchObject({ model: QWEN, requested_model: null, fallback_from: null, status: 503 });
  });

  it('refuses an alias whose target the caller may not use with the unknown-model 404 naming the alias, forwarding nothing', async () => {
    const before = counts();
    const refused = await ask('big', KEYS.teamB);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({
      error: { message: 'The model "big" does not exist or you do not have access to it.', type: 'not_found_error', param: 'model', code: 'model_not_found' },
    });
    expect(counts()).toEqual(before);
    expect((await ask('big')).headers.get('x-tollgate-model')).toBe(LLAMA);
  });

  it('works for the openai client through an alias and through a fallback', async () => {
    const client = new OpenAI({ apiKey: KEYS.teamA, baseURL: `${gw.url}/v1`, maxRetries: 0 });
    const aliased = await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(aliased.model).toBe(QWEN);
    expect(aliased.choices[0]!.message.content).toBe('from vllm');
    vllm.mode = 429;
    const fellBack = await client.chat.completions.create({ model: 'fast', messages: [{ role: 'user', content: 'hi' }] });
    expect(fellBack.model).toBe(LLAMA);
    expect(fellBack.choices[0]!.message.content).toBe('from inference');
    expect(fellBack.usage).toEqual({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
  });
});
