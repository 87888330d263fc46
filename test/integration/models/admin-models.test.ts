import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/wait.js';

const admin = { authorization: bearer(KEYS.admin) };
const LEAD_KEY = 'tg-test-team-z-lead-00112233445566';
const lead = { authorization: bearer(LEAD_KEY) };
const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const LLAMA = 'meta-llama/Llama-3.1-8B-Instruct';

const chatStatus = async (gw: RunningGateway, key: string, model: string): Promise<number> =>
  (await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(key)).send({ model, messages: [{ role: 'user', content: 'hi' }] })).status;

/** SPEC 21 through the admin API, on two instances sharing PostgreSQL. */
describe('model lists at runtime (admin API, two instances)', () => {
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    const config = testConfig(
      { service: service.url, inference: inference.url },
      {
        database: { url: database.url, refreshIntervalMs: 60_000 },
        models: { groups: { llama: ['meta-llama/*'] } },
        auth: { keys: KEY_ENTRIES, admin: { keys: [...ADMIN_ENTRIES, { id: 'z-lead', sha256: digest(LEAD_KEY), role: 'team-admin', team: 'team-z' }] } },
      },
    );
    a = await startGateway(config);
    b = await startGateway(config);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await Promise.all([service?.close(), inference?.close()]);
    await database?.drop();
  });

  it('applies a team\'s changed list on the other instance within 1 s, and audits it', async () => {
    expect((await request(a.url).post('/admin/teams').set(admin).send({ id: 'team-z', models: ['@llama'] })).status).toBe(201);
    const key = (await request(a.url).post('/admin/keys').set(admin).send({ team: 'team-z' })).body as { key: string; models: unknown };
    expect(key.models).toBeNull();
    await eventually(async () => (await chatStatus(b, key.key, LLAMA)) === 200);
    expect(await chatStatus(b, key.key, QWEN)).toBe(404);
    const patched = await request(a.url).patch('/admin/teams/team-z').set(admin).send({ models: ['@llama', 'OpenPipe/*'] });
    expect(patched.status).toBe(200);
    expect(patched.body.models).toEqual(['@llama', 'OpenPipe/*']);
    const started = performance.now();
    await eventually(async () => (await chatStatus(b, key.key, QWEN)) === 200);
    expect(performance.now() - started).toBeLessThan(1000);
    const today = new Date().toISOString().slice(0, 10);
    const audit = await request(a.url).get(`/admin/audit?from=${today}&to=${today}&action=team.update`).set(admin);
    expect(audit.status).toBe(200);
    expect(audit.body.data).toEqual([expect.objectContaining({ action: 'team.update', target: 'team-z', actor: 'ops' })]);
  });

  it('lets a team-admin narrow a key within its team\'s list and refuses a widening (403, param models)', async () => {
    const narrow = await request(a.url).post('/admin/keys').set(lead).send({ team: 'team-z', models: ['meta-llama/Llama-*'] });
    expect(narrow.status).toBe(201);
    expect(narrow.body.models).toEqual(['meta-llama/Llama-*']);
    const wide = await request(a.url).post('/admin/keys').set(lead).send({ team: 'team-z', models: ['openai/*'] });
    expect(wide.status).toBe(403);
    expect(wide.body).toEqual({
      error: {
        message: 'The admin role "team-admin" may not give a key the model pattern "openai/*": it is not within its team\'s models.',
        type: 'permission_error',
        param: 'models',
        code: 'insufficient_role',
      },
    });
    const widened = await request(a.url).patch(`/admin/keys/${narrow.body.id as string}`).set(lead).send({ models: ['*'] });
    expect(widened.status).toBe(403);
    expect(widened.body.error.param).toBe('models');
    // An admin is not held to the team's list (the team's list still holds at request time).
    expect((await request(a.url).patch(`/admin/keys/${narrow.body.id as string}`).set(admin).send({ models: ['*'] })).status).toBe(200);
  });

  it('shows the effective table and this month\'s usage by model, a team-admin its own team only', async () => {
    await request(a.url).post('/admin/teams').set(admin).send({ id: 'team-x' }).expect(201);
    await Promise.all([a.gateway.settled(), b.gateway.settled()]);
    const all = await request(a.url).get('/admin/models').set(admin);
    expect(all.status).toBe(200);
    expect(all.body.groups).toEqual({ llama: ['meta-llama/*'] });
    expect(all.body.default).toEqual(['*']);
    expect(all.body.teams).toEqual([
      { id: 'team-x', models: null, effective: ['*'] },
      { id: 'team-z', models: ['@llama', 'OpenPipe/*'], effective: ['meta-llama/*', 'OpenPipe/*'] },
    ]);
    expect(all.body.usage).toContainEqual({ team: 'team-z', model: QWEN, requests: expect.any(Number), total_tokens: expect.any(Number), cost: 0 });
    const own = await request(a.url).get('/admin/models').set(lead);
    expect(own.status).toBe(200);
    expect(own.body.teams.map((t: { id: string }) => t.id)).toEqual(['team-z']);
    expect(new Set(own.body.usage.map((u: { team: string }) => u.team))).toEqual(new Set(['team-z']));
  });

  it('refuses bad lists with a 400 naming the entry', async () => {
    const unknown = await request(a.url).post('/admin/teams').set(admin).send({ id: 'team-y', models: ['x', '@nope'] });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error).toMatchObject({ code: 'invalid_request', param: 'models', message: 'models[1]: unknown group "@nope" (known: @llama)' });
    const empty = await request(a.url).post('/admin/keys').set(admin).send({ team: 'team-z', models: [''] });
    expect(empty.status).toBe(400);
    expect(empty.body.error).toMatchObject({ param: 'models', message: 'models[0]: must not be empty' });
    const notString = await request(a.url).patch('/admin/teams/team-z').set(admin).send({ models: [7] });
    expect(notString.status).toBe(400);
    expect(notString.body.error.message).toContain('models[0]');
  });
});
