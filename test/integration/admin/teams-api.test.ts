import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const admin = { authorization: bearer(KEYS.admin) };
const MODEL = 'OpenPipe/Qwen3-14B-Instruct';
const SEARCH_KEY = 'tg-test-search-team-key-1111111111';
const BUDGET_KEY = 'tg-test-budget-team-key-2222222222';
const OPS_KEY = 'tg-test-ops-team-key-3333333333';
const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const NOTHING_SPENT = { day: { requests: 0, total_tokens: 0, cost: 0 }, month: { requests: 0, total_tokens: 0, cost: 0 } };

const error = (code: string, message: string, type: string, param: string | null = null) => ({ error: { message, type, param, code } });

/** SPEC 16: team records through /admin/teams, config teams read-only, spend read from the team's counters. */
describe('/admin/teams', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      auth: {
        keys: [
          ...KEY_ENTRIES,
          { id: 'search-bot', sha256: digest(SEARCH_KEY), team: 'search' },
          { id: 'budget-bot', sha256: digest(BUDGET_KEY), team: 'budget' },
          { id: 'ops-bot', sha256: digest(OPS_KEY), team: 'ops' },
        ],
        admin: { keys: ADMIN_ENTRIES },
      },
      teams: [
        { id: 'search', description: 'Search', limits: { rpm: 30, costPerMonth: 2000 } },
        { id: 'budget', limits: { costPerMonth: 0.0005 } },
      ],
      metering: { prices: { models: { [MODEL]: { prompt: 0, completion: 100 } } } },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  const chat = (key: string, project = 'default') =>
    request(stack.gw.url)
      .post('/v1/chat/completions')
      .set('authorization', bearer(key))
      .set('openai-project', `${key === SEARCH_KEY ? 'search' : 'budget'}/${project}`)
      .set('x-fixture-usage', '3,1')
      .send({ model: MODEL, messages: [{ role: 'user', content: 'hi' }], max_tokens: 1 });

  it('shows a config team read-only, with what it spent today and this month and what remains', async () => {
    for (const project of ['a', 'b', 'c']) expect((await chat(SEARCH_KEY, project)).status).toBe(200);
    await stack.gw.gateway.settled();
    const res = await request(stack.gw.url).get('/admin/teams/search').set(admin);
    expect([res.status, res.body]).toEqual([
      200,
      {
        id: 'search',
        description: 'Search',
        limits: { rpm: 30, costPerMonth: 2000 },
        models: null,
        disabled: false,
        createdAt: null,
        source: 'config',
        spend: { day: { requests: 3, total_tokens: 12, cost: 0.0003 }, month: { requests: 3, total_tokens: 12, cost: 0.0003 } },
        remaining: { rpm: 27, costPerMonth: 1999.9997 },
      },
    ]);
    const patch = await request(stack.gw.url).patch('/admin/teams/search').set(admin).send({ disabled: true });
    expect([patch.status, patch.body]).toEqual([
      409,
      error('read_only_team', 'Team "search" comes from the configuration file (teams); change it there and reload.', 'invalid_request_error', 'id'),
    ]);
    expect((await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'search' })).status).toBe(409);
  });

  it('holds a team costPerMonth over every key and project of the team, naming the team in the 429', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await chat(BUDGET_KEY, `p${i % 3}`)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429, 429]);
    const refused = await chat(BUDGET_KEY);
    expect(refused.body.error.code).toBe('insufficient_quota');
    expect(refused.body.error.message).toMatch(/^Monthly cost budget \(costPerMonth\) exhausted on team budget: limit 0\.0005 USD, used 0\.0005 USD, /);
  });

  it('creates, reads, lists, changes and deletes a team; a team with keys is 409 team_in_use', async () => {
    const created = await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'ml-infra', description: 'ML', limits: { tpm: 1000 } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: 'ml-infra',
      description: 'ML',
      limits: { tpm: 1000 },
      models: null,
      disabled: false,
      createdAt: expect.stringMatching(ISO),
      source: 'api',
      spend: NOTHING_SPENT,
      remaining: { tpm: 1000 },
    });
    const list = await request(stack.gw.url).get('/admin/teams').set(admin);
    expect(list.body.data.map((t: { id: string; source: string }) => [t.id, t.source])).toEqual([
      ['budget', 'config'],
      ['ml-infra', 'api'],
      ['search', 'config'],
    ]);
    const patched = await request(stack.gw.url).patch('/admin/teams/ml-infra').set(admin).send({ limits: { rpm: 5 }, description: null });
    expect([patched.status, patched.body.limits, patched.body.description, patched.body.remaining]).toEqual([200, { rpm: 5 }, null, { rpm: 5 }]);
    const key = await request(stack.gw.url).post('/admin/keys').set(admin).send({ team: 'ml-infra' });
    const inUse = await request(stack.gw.url).delete('/admin/teams/ml-infra').set(admin);
    expect([inUse.status, inUse.body]).toEqual([409, error('team_in_use', 'Team "ml-infra" still has keys; revoke them (or move them) first.', 'invalid_request_error', 'id')]);
    await request(stack.gw.url).delete(`/admin/keys/${key.body.id}`).set(admin).expect(204);
    expect((await request(stack.gw.url).delete('/admin/teams/ml-infra').set(admin)).status).toBe(204);
    const gone = await request(stack.gw.url).get('/admin/teams/ml-infra').set(admin);
    expect([gone.status, gone.body]).toEqual([404, error('team_not_found', 'No team with id "ml-infra".', 'not_found_error', 'id')]);
  });

  it('refuses a disabled team\'s keys with 403 team_disabled, and serves them again once enabled', async () => {
    await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'team-b' }).expect(201);
    await request(stack.gw.url).patch('/admin/teams/team-b').set(admin).send({ disabled: true }).expect(200);
    const refused = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamB));
    expect([refused.status, refused.body]).toEqual([403, error('team_disabled', 'Team "team-b" is disabled; ask an administrator to enable it.', 'permission_error')]);
    expect((await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA))).status).toBe(200);
    await request(stack.gw.url).patch('/admin/teams/team-b').set(admin).send({ disabled: false }).expect(200);
    expect((await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamB))).status).toBe(200);
  });

  it('refuses to delete a team that a config key (auth.keys[].team) names: 409 team_in_use, the record kept', async () => {
    await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'ops', description: 'named by the config key ops-bot' }).expect(201);
    const inUse = await request(stack.gw.url).delete('/admin/teams/ops').set(admin);
    expect([inUse.status, inUse.body]).toEqual([409, error('team_in_use', 'Team "ops" still has keys; revoke them (or move them) first.', 'invalid_request_error', 'id')]);
    const kept = await request(stack.gw.url).get('/admin/teams/ops').set(admin);
    expect([kept.status, kept.body.id, kept.body.source]).toEqual([200, 'ops', 'api']);
    expect((await request(stack.gw.url).get('/v1/models').set('authorization', bearer(OPS_KEY))).status).toBe(200);
  });

  it('validates team bodies like keys: the project-name rule, known limits', async () => {
    const badId = await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'a/b' });
    expect([badId.status, badId.body.error.code, badId.body.error.param]).toEqual([400, 'invalid_request', 'id']);
    const badLimit = await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'ok', limits: { rpm: -1 } });
    expect([badLimit.status, badLimit.body.error.param]).toEqual([400, 'limits.rpm']);
    const unknown = await request(stack.gw.url).post('/admin/teams').set(admin).send({ id: 'ok', limits: { rph: 1 } });
    expect([unknown.status, unknown.body.error.param]).toEqual([400, 'rph']);
    const empty = await request(stack.gw.url).patch('/admin/teams/team-a').set(admin).send({});
    expect([empty.status, empty.body.error]).toEqual([
      400,
      { message: 'body: name at least one field to change: limits, models, description, disabled', type: 'invalid_request_error', param: 'body', code: 'invalid_request' },
    ]);
    expect((await request(stack.gw.url).get('/admin/teams').set(admin)).body.object).toBe('list');
    const query = await request(stack.gw.url).get('/admin/teams?team=team-a').set(admin);
    expect([query.status, query.body.error.code, query.body.error.param]).toEqual([400, 'invalid_query', 'team']);
  });
});

describe('teams.require', () => {
  it('refuses a key naming a team without a record (400 param team), and allows it when off', async () => {
    const on = await startStack({ teams: { require: true, records: [{ id: 'known' }] } });
    const off = await startStack();
    try {
      const refused = await request(on.gw.url).post('/admin/keys').set(admin).send({ team: 'nobody' });
      expect([refused.status, refused.body]).toEqual([
        400,
        error('invalid_request', 'team: no team "nobody" exists (teams.require is on); create it first.', 'invalid_request_error', 'team'),
      ]);
      expect((await request(on.gw.url).post('/admin/keys').set(admin).send({ team: 'known' })).status).toBe(201);
      expect((await request(off.gw.url).post('/admin/keys').set(admin).send({ team: 'nobody' })).status).toBe(201);
    } finally {
      await Promise.all([on.close(), off.close()]);
    }
  });
});
