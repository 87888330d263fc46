import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const admin = { authorization: bearer(KEYS.admin) };
const invalid = (param: string, message: string) => ({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });

/** SPEC 13.3 on one instance (SQLite): `/admin/resources`, its filters and what it refuses. */
describe('ownership records through the admin API', () => {
  let stack: Stack;
  const records = [
    ['model', 'm-a-rl', 'team-a', 'rl'],
    ['model', 'm-a-eval', 'team-a', 'eval'],
    ['training_job', 'j-a-rl', 'team-a', 'rl'],
    ['model', 'm-b-rl', 'team-b', 'rl'],
    ['dataset', 'd-b-rl', 'team-b', 'rl'],
  ] as const;
  beforeAll(async () => {
    stack = await startStack();
    for (const [kind, id, team, project] of records) {
      const res = await request(stack.gw.url).put(`/admin/resources/${kind}/${id}`).set(admin).send({ team, project });
      expect([res.status, res.body]).toEqual([200, { kind, id, team, project, createdAt: expect.any(String) }]);
    }
  });
  afterAll(async () => {
    await stack.close();
  });

  const ids = async (query: string): Promise<string[]> => {
    const res = await request(stack.gw.url).get(`/admin/resources${query}`).set(admin);
    expect([res.status, res.body.object]).toEqual([200, 'list']);
    return (res.body.data as Array<{ id: string }>).map((r) => r.id).sort();
  };

  it('lists every record, or those of one team, project or kind, or any mix of them', async () => {
    expect(await ids('')).toEqual(['d-b-rl', 'j-a-rl', 'm-a-eval', 'm-a-rl', 'm-b-rl']);
    expect(await ids('?team=team-a')).toEqual(['j-a-rl', 'm-a-eval', 'm-a-rl']);
    expect(await ids('?project=rl')).toEqual(['d-b-rl', 'j-a-rl', 'm-a-rl', 'm-b-rl']);
    expect(await ids('?kind=model')).toEqual(['m-a-eval', 'm-a-rl', 'm-b-rl']);
    expect(await ids('?kind=dataset')).toEqual(['d-b-rl']);
    expect(await ids('?team=team-a&project=rl&kind=model')).toEqual(['m-a-rl']);
    expect(await ids('?team=team-c')).toEqual([]);
  });

  it('refuses an unknown query parameter, a kind that cannot be one, and a kind in the path that cannot be one', async () => {
    const unknown = await request(stack.gw.url).get('/admin/resources?owner=team-a').set(admin);
    expect([unknown.status, unknown.body.error.code, unknown.body.error.param]).toEqual([400, 'invalid_query', 'owner']);
    const kind = await request(stack.gw.url).get('/admin/resources?kind=Model').set(admin);
    expect([kind.status, kind.body.error.code, kind.body.error.param]).toEqual([400, 'invalid_query', 'kind']);
    const inPath = await request(stack.gw.url).put('/admin/resources/Model/x').set(admin).send({ team: 'team-a', project: 'rl' });
    expect([inPath.status, inPath.body.error]).toEqual([
      404,
      { message: 'No resource kind "Model": kinds are lowercase names of a-z, 0-9 and _ (model, training_job, or a kind a config route names).', type: 'not_found_error', param: 'kind', code: 'not_found' },
    ]);
  });

  it.each([
    ['a part before entity/project/name', 'x/acme/rl/agent'],
    ['a blank in a part', 'acme/rl agents/agent'],
    ['a part after it', 'acme/rl/agent/extra'],
    ['a version', 'acme/rl/agent:v3'],
    ['two parts', 'acme/agent'],
  ])('refuses an artifact with %s (400, nothing recorded)', async (_name, artifact) => {
    const res = await request(stack.gw.url).put('/admin/resources/model/m-new').set(admin).send({ team: 'team-a', project: 'rl', artifact });
    expect([res.status, res.body]).toEqual([400, invalid('artifact', 'artifact: must be entity/project/name, the path of its wandb-artifact:/// name')]);
    expect(await ids('?kind=model&team=team-a')).toEqual(['m-a-eval', 'm-a-rl']);
  });

  it('gives an artifact to a model only; releases a record once (then 404)', async () => {
    const job = await request(stack.gw.url).put('/admin/resources/training_job/j-a-rl').set(admin).send({ team: 'team-a', project: 'rl', artifact: 'acme/rl/agent' });
    expect([job.status, job.body]).toEqual([400, invalid('artifact', 'Only a model has an artifact name.')]);
    const named = await request(stack.gw.url).put('/admin/resources/model/m-a-rl').set(admin).send({ team: 'team-a', project: 'rl', artifact: 'acme/rl/agent' });
    expect([named.status, named.body.artifact]).toEqual([200, 'acme/rl/agent']);
    expect((await request(stack.gw.url).delete('/admin/resources/dataset/d-b-rl').set(admin)).status).toBe(204);
    const again = await request(stack.gw.url).delete('/admin/resources/dataset/d-b-rl').set(admin);
    expect([again.status, again.body.error.code]).toEqual([404, 'resource_not_found']);
    expect(await ids('?team=team-b')).toEqual(['m-b-rl']);
  });
});
