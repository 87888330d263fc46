import { SignJWT } from 'jose';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KEY_ENTRIES, KEYS, ADMIN_ENTRIES, bearer } from '../../helpers/keys.js';
import { metricValue, startStack } from '../../helpers/gateway.js';

const SECRET = 'models-test-secret-0123456789abcdef0123';
const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';

/** The body an unknown model gets (SPEC 21): a forbidden model answers exactly this. */
const unknownModel = (model: string): { error: Record<string, unknown> } => ({
  error: { message: `The model "${model}" does not exist or you do not have access to it.`, type: 'not_found_error', param: 'model', code: 'model_not_found' },
});

async function jwtFor(team: string, claims: Record<string, unknown>): Promise<string> {
  return new SignJWT({ team, ...claims })
    .setProtectedHeader({ alg: 'HS256' })
    .setSubject('svc-1')
    .setAudience('tollgate')
    .setExpirationTime('10m')
    .sign(new TextEncoder().encode(SECRET));
}

const chat = (url: string, key: string, model: string): Promise<Response> =>
  fetch(`${url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: bearer(key), 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });

describe('model allow-lists (SPEC 21)', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;

  beforeAll(async () => {
    stack = await startStack({
      models: { groups: { base: ['OpenPipe/*'] }, default: ['*'], listCacheMs: 60_000 },
      routes: [{ path: '/v1/training/runs', methods: ['POST'], upstream: 'service', body: 'json', 'checks-model': 'base_model' }],
      teams: [
        { id: 'team-a', models: ['@base', 'meta-llama/*'] },
        { id: 'team-b', models: ['meta-llama/*'] },
      ],
      auth: {
        keys: KEY_ENTRIES.map((key) => (key.id === 'team-a-prod' ? { ...key, models: [QWEN] } : key)),
        admin: { keys: ADMIN_ENTRIES },
        jwt: { secret: SECRET, audience: 'tollgate', algorithms: ['HS256'], claims: { models: 'tollgate_models' } },
      },
    });
  });
  afterAll(async () => stack?.close());

  it('refuses a model outside the team list with the unknown-model 404, forwards nothing, counts it and writes a ledger row at no cost', async () => {
    const before = stack.service.requests.length;
    const res = await chat(stack.gw.url, KEYS.teamB, QWEN);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual(unknownModel(QWEN));
    expect(res.headers.get('x-ratelimit-limit-requests')).toBeNull();
    expect(stack.service.requests.length).toBe(before);
    expect(await metricValue(stack.gw.url, 'tollgate_model_denials_total{scope="team"}')).toBe(1);
    await stack.gw.gateway.settled();
    const today = new Date().toISOString().slice(0, 10);
    const rows = await fetch(`${stack.gw.url}/admin/usage/requests?team=team-b&from=${today}&to=${today}`, { headers: { authorization: bearer(KEYS.admin) } }).then((r) => r.json() as Promise<{ data: Array<Record<string, unknown>> }>);
    expect(rows.data.find((row) => row.status === 404)).toMatchObject({ status: 404, model: QWEN, cost: 0, total_tokens: 0 });
  });

  it('admits the model inside key ∩ team, and a key list narrows its team', async () => {
    expect((await chat(stack.gw.url, KEYS.teamA, LLAMA)).status).toBe(200);
    expect((await chat(stack.gw.url, KEYS.teamAProdOnly, QWEN)).status).toBe(200);
    const narrowed = await chat(stack.gw.url, KEYS.teamAProdOnly, LLAMA);
    expect(narrowed.status).toBe(404);
    expect(await narrowed.json()).toEqual(unknownModel(LLAMA));
  });

  it('matches a model name as the upstream decodes it: an escape of the same name passes, a look-alike does not', async () => {
    const raw = (model: string): Promise<Response> =>
      fetch(`${stack.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: bearer(KEYS.teamAProdOnly), 'content-type': 'application/json' },
        body: `{"model":"${model}","messages":[{"role":"user","content":"hi"}]}`,
      });
    // \u004f is "O": the upstream reads the allowed name.
    expect((await raw('\\u004fpenPipe/Qwen3-14B-Instruct')).status).toBe(200);
    for (const lookAlike of ['OpenPipe/Qwen3-14B-Instruct ', 'OpenPipe\\u2215Qwen3-14B-Instruct', 'openpipe/Qwen3-14B-Instruct', 'OpenPipe/Qwen3-14B-Instruct\\u0000']) {
      const res = await raw(lookAlike);
      expect([lookAlike, res.status]).toEqual([lookAlike, 404]);
    }
  });

  it('intersects a JWT claim with its team list; a claim that is not a list allows nothing', async () => {
    const llamaOnly = await jwtFor('team-a', { tollgate_models: ['meta-llama/*'] });
    expect((await chat(stack.gw.url, llamaOnly, LLAMA)).status).toBe(200);
    expect((await chat(stack.gw.url, llamaOnly, QWEN)).status).toBe(404);
    // The claim allows Qwen, team-b's list does not.
    const teamB = await jwtFor('team-b', { tollgate_models: ['*'] });
    expect((await chat(stack.gw.url, teamB, QWEN)).status).toBe(404);
    const malformed = await jwtFor('team-a', { tollgate_models: 42 });
    expect((await chat(stack.gw.url, malformed, LLAMA)).status).toBe(404);
    expect(await metricValue(stack.gw.url, 'tollgate_model_denials_total{scope="jwt"}')).toBe(2);
  });

  it('lists and retrieves through the openai client exactly what each caller may call', async () => {
    const client = (key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
    const ids = async (key: string): Promise<string[]> => {
      const out: string[] = [];
      for await (const model of client(key).models.list()) out.push(model.id);
      return out;
    };
    expect(await ids(KEYS.teamA)).toEqual([QWEN, LLAMA]);
    expect(await ids(KEYS.teamAProdOnly)).toEqual([QWEN]);
    expect(await ids(KEYS.teamB)).toEqual([LLAMA]);
    expect(await client(KEYS.teamAProdOnly).models.retrieve(QWEN)).toMatchObject({ id: QWEN, object: 'model' });
    const refused = await client(KEYS.teamB).models.retrieve(QWEN).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(OpenAI.NotFoundError);
    expect((refused as InstanceType<typeof OpenAI.NotFoundError>).error).toEqual(unknownModel(QWEN).error);
  });

  it('answers 200 listings with at most one upstream call per cache period', async () => {
    const asked = (): number => stack.inference.requests.filter((r) => r.url === '/v1/models').length;
    const before = asked();
    for (let i = 0; i < 200; i += 1) {
      const res = await fetch(`${stack.gw.url}/v1/models`, { headers: { authorization: bearer(KEYS.teamA) } });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
    }
    // The earlier tests fetched the list once; 60 s of cache: no call since.
    expect(before).toBe(1);
    expect(asked()).toBe(1);
  });

  it('checks the field a config route names with checks-model, forwarding only what the caller may use', async () => {
    const run = (key: string, model: string): Promise<Response> =>
      fetch(`${stack.gw.url}/v1/training/runs`, { method: 'POST', headers: { authorization: bearer(key), 'content-type': 'application/json' }, body: JSON.stringify({ base_model: model, steps: 3 }) });
    const before = stack.service.requests.length;
    const refused = await run(KEYS.teamB, QWEN);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: { ...unknownModel(QWEN).error, param: 'base_model' } });
    expect(stack.service.requests.length).toBe(before);
    await (await run(KEYS.teamB, LLAMA)).arrayBuffer();
    expect(stack.service.requests.length).toBe(before + 1);
    expect(stack.service.requests.at(-1)?.url).toBe('/v1/training/runs');
  });

  it('refuses base_model of a model creation as Python reads it', async () => {
    const create = (body: string): Promise<Response> =>
      fetch(`${stack.gw.url}/v1/preview/models`, { method: 'POST', headers: { authorization: bearer(KEYS.teamB), 'content-type': 'application/json' }, body });
    const refused = await create(JSON.stringify({ project: 'p', name: 'n', base_model: QWEN }));
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({ error: { ...unknownModel(QWEN).error, param: 'base_model' } });
    // Python keeps the last duplicate: the gateway cannot be sure which one is checked, so refuses.
    const twice = await create(`{"project":"p","name":"n","base_model":"${LLAMA}","base_model":"${QWEN}"}`);
    expect(twice.status).toBe(400);
  });
});
