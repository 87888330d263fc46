import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const TRAINED = 'wandb-artifact:///acme/rl-agents/agent';

/** SPEC 21 with 13: two teams on one upstream account (ownership on): a trained model is its team's alone. */
describe('two teams on a shared upstream account', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  const client = (key: string): OpenAI => new OpenAI({ apiKey: key, baseURL: `${stack.gw.url}/v1`, maxRetries: 0 });
  const ids = async (key: string): Promise<Array<{ id: string; owned_by: string }>> => {
    const out: Array<{ id: string; owned_by: string }> = [];
    for await (const model of client(key).models.list()) out.push({ id: model.id, owned_by: model.owned_by });
    return out;
  };

  beforeAll(async () => {
    stack = await startStack({ upstreams: { service: { auth: { bearer: 'shared-account-key' } } } });
    const created = await fetch(`${stack.gw.url}/v1/preview/models`, {
      method: 'POST',
      headers: { authorization: bearer(KEYS.teamA), 'content-type': 'application/json' },
      body: JSON.stringify({ entity: 'acme', project: 'rl-agents', name: 'agent', base_model: QWEN }),
    });
    expect(created.status).toBe(200);
  });
  afterAll(async () => stack?.close());

  it('lists team A\'s trained model to team A (owned_by the team) and never to team B', async () => {
    expect(await ids(KEYS.teamA)).toContainEqual({ id: TRAINED, owned_by: 'team-a' });
    expect((await ids(KEYS.teamB)).map((m) => m.id)).not.toContain(TRAINED);
    expect(await client(KEYS.teamA).models.retrieve(TRAINED)).toMatchObject({ id: TRAINED, object: 'model', owned_by: 'team-a' });
    await expect(client(KEYS.teamB).models.retrieve(TRAINED)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('lets team A chat with it and answers team B as for a model that does not exist', async () => {
    const chat = (key: string): Promise<Response> =>
      fetch(`${stack.gw.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: bearer(key), 'content-type': 'application/json' },
        body: JSON.stringify({ model: `${TRAINED}:latest`, messages: [{ role: 'user', content: 'hi' }] }),
      });
    expect((await chat(KEYS.teamA)).status).toBe(200);
    const refused = await chat(KEYS.teamB);
    expect(refused.status).toBe(404);
    expect(await refused.json()).toEqual({
      error: { message: `The model "${TRAINED}:latest" does not exist or you do not have access to it.`, type: 'not_found_error', param: 'model', code: 'model_not_found' },
    });
  });
});
