import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/wait.js';

const admin = { authorization: bearer(KEYS.admin) };

/** Polls (the change travels through another instance and PostgreSQL: no event to await here); answers the ms it took. */
async function msUntil(done: () => Promise<boolean>, timeoutMs = 5000): Promise<number> {
  const started = performance.now();
  await eventually(done, timeoutMs);
  return performance.now() - started;
}

/** SPEC 16: admin keys made at runtime, and team changes, reach every instance within 1 s. */
describe('runtime admin keys and teams across two instances sharing PostgreSQL', () => {
  let database: TestDatabase;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let a: RunningGateway;
  let b: RunningGateway;
  const config = () =>
    testConfig({ service: service.url, inference: inference.url }, { database: { url: database.url, refreshIntervalMs: 60_000 } });

  beforeAll(async () => {
    [database, service, inference] = await Promise.all([createTestDatabase(), startTrainingService(), startInferenceHost()]);
    [a, b] = await Promise.all([startGateway(config()), startGateway(config())]);
  });
  afterAll(async () => {
    await Promise.all([a.close(), b.close()]);
    await Promise.all([service.close(), inference.close()]);
    await database.drop();
  });

  it('serves an admin key made on A from B within 1 s, with its role, shows its secret once, and refuses it on /v1', async () => {
    const created = await request(a.url).post('/admin/admin-keys').set(admin).send({ role: 'viewer', description: 'finance' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['createdAt', 'description', 'disabled', 'expiresAt', 'id', 'key', 'role', 'source', 'team']);
    const viewer = { authorization: bearer(created.body.key as string) };
    expect(await msUntil(async () => (await request(b.url).get('/admin/keys').set(viewer)).status === 200)).toBeLessThan(1000);
    const write = await request(b.url).post('/admin/keys').set(viewer).send({ team: 'team-a' });
    expect([write.status, write.body.error.code]).toEqual([403, 'insufficient_role']);
    const got = await request(b.url).get(`/admin/admin-keys/${created.body.id}`).set(admin);
    expect(got.body).toEqual({ ...created.body, key: undefined });
    expect(JSON.stringify(got.body)).not.toContain(created.body.key);
    const v1 = await request(b.url).get('/v1/models').set(viewer);
    expect([v1.status, v1.body.error.code]).toEqual([401, 'invalid_api_key']);
  });

  it('refuses an admin key revoked on B on A within 1 s, and one rotated keeps only its new secret', async () => {
    const created = await request(a.url).post('/admin/admin-keys').set(admin).send({ role: 'team-admin', team: 'team-a' });
    const lead = { authorization: bearer(created.body.key as string) };
    await eventually(async () => (await request(b.url).get('/admin/keys').set(lead)).status === 200);
    const rotated = await request(b.url).post(`/admin/admin-keys/${created.body.id}/rotate`).set(admin).send({});
    expect(rotated.status).toBe(200);
    expect(await msUntil(async () => (await request(a.url).get('/admin/keys').set(lead)).status === 401)).toBeLessThan(1000);
    const fresh = { authorization: bearer(rotated.body.key as string) };
    await eventually(async () => (await request(a.url).get('/admin/keys').set(fresh)).status === 200);
    await request(b.url).delete(`/admin/admin-keys/${created.body.id}`).set(admin).expect(204);
    expect(await msUntil(async () => (await request(a.url).get('/admin/keys').set(fresh)).status === 401)).toBeLessThan(1000);
  });

  it('applies a team PATCHed on B to A\'s traffic within 1 s', async () => {
    await request(a.url).post('/admin/teams').set(admin).send({ id: 'team-b' }).expect(201);
    await request(b.url).patch('/admin/teams/team-b').set(admin).send({ disabled: true }).expect(200);
    expect(await msUntil(async () => (await request(a.url).get('/v1/models').set('authorization', bearer(KEYS.teamB))).status === 403)).toBeLessThan(1000);
  });
});
