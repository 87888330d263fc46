import OpenAI from 'openai';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { existsSync, readFileSync } from 'node:fs';
import { startStack } from '../../helpers/gateway.js';
import { bearer, digest, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const admin = { authorization: bearer(KEYS.admin) };
const SECRET = /^tg-[A-Za-z0-9_-]{32}$/;
const KEY_ID = /^key-[0-9a-f]{16}$/;
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

/** SPEC 12.1 on one instance (the embedded SQLite store): what each call answers, and that the keys work. */
describe('keys through the admin API', () => {
  let stack: Stack;
  const secrets: string[] = [];
  beforeAll(async () => {
    stack = await startStack();
  });
  afterAll(async () => {
    await stack.close();
  });

  const create = async (body: Record<string, unknown>) => {
    const res = await request(stack.gw.url).post('/admin/keys').set(admin).send(body);
    if (res.status === 201) secrets.push(res.body.key as string);
    return res;
  };
  const models = (key: string) => request(stack.gw.url).get('/v1/models').set('authorization', bearer(key));

  it('creates a key: 201 with the record and the secret, shown this once; the key works at once', async () => {
    const res = await create({ team: 'team-c', projects: ['rl', 'eval'], defaultProject: 'rl', limits: { rpm: 100 }, description: 'notebook' });
    expect(res.status).toBe(201);
    expect(res.body).toEqual({
      id: expect.stringMatching(KEY_ID),
      team: 'team-c',
      projects: ['rl', 'eval'],
      defaultProject: 'rl',
      limits: { rpm: 100 },
      models: null,
      description: 'notebook',
      createdAt: expect.stringMatching(ISO),
      expiresAt: null,
      disabled: false,
      source: 'api',
      key: expect.stringMatching(SECRET),
    });
    const served = await models(res.body.key);
    expect(served.status).toBe(200);
    expect(served.headers['x-ratelimit-limit-requests']).toBe('100');
    expect(stack.inference.last.headers['openai-project']).toBeUndefined();
    const get = await request(stack.gw.url).get(`/admin/keys/${res.body.id}`).set(admin);
    const { key: _secret, ...record } = res.body as Record<string, unknown>;
    expect(get.body).toEqual(record);
  });

  it('lists API keys and config keys (source "config"), never a secret or a digest, filtered by team', async () => {
    const res = await request(stack.gw.url).get('/admin/keys').set(admin);
    expect(res.status).toBe(200);
    expect(res.body.object).toBe('list');
    const sources = (res.body.data as Array<{ id: string; source: string }>).map((k) => [k.id, k.source]);
    expect(sources.slice(0, 3)).toEqual([
      ['team-a-bot', 'config'],
      ['team-a-prod', 'config'],
      ['team-b-bot', 'config'],
    ]);
    expect(sources.slice(3).every(([, source]) => source === 'api')).toBe(true);
    const text = JSON.stringify(res.body);
    for (const secret of secrets) expect(text).not.toContain(secret);
    expect(text).not.toMatch(/[0-9a-f]{64}/);
    const teamC = await request(stack.gw.url).get('/admin/keys?team=team-c').set(admin);
    expect((teamC.body.data as Array<{ team: string }>).every((k) => k.team === 'team-c')).toBe(true);
    expect(teamC.body.data.length).toBeGreaterThan(0);
  });

  it('updates limits, projects and the description; a config key is 409 read_only_key; an unknown one 404 key_not_found', async () => {
    const { body: created } = await create({ team: 'team-c', limits: { rpm: 5 } });
    const res = await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ limits: { rpm: 7, tpm: 1000 }, projects: ['rl'], defaultProject: 'rl', description: 'moved' });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ id: created.id, limits: { rpm: 7, tpm: 1000 }, projects: ['rl'], description: 'moved', source: 'api' });
    expect(res.body.key).toBeUndefined();
    expect((await models(created.key)).headers['x-ratelimit-limit-requests']).toBe('7');

    const readOnly = await request(stack.gw.url).patch('/admin/keys/team-a-bot').set(admin).send({ disabled: true });
    expect(readOnly.status).toBe(409);
    expect(readOnly.body).toEqual({
      error: { message: 'Key "team-a-bot" comes from the configuration file (auth.keys); change it there and reload.', type: 'invalid_request_error', param: 'id', code: 'read_only_key' },
    });
    const unknown = await request(stack.gw.url).patch('/admin/keys/key-nope').set(admin).send({ disabled: true });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: { message: 'No key with id "key-nope".', type: 'not_found_error', param: 'id', code: 'key_not_found' } });
  });

  it('refuses a disabled key with 401 saying so, and serves it again once enabled', async () => {
    const { body: created } = await create({ team: 'team-c' });
    await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ disabled: true }).expect(200);
    const refused = await models(created.key);
    expect(refused.status).toBe(401);
    expect(refused.headers['www-authenticate']).toBe('Bearer');
    expect(refused.body).toEqual({ error: { message: 'This API key is disabled.', type: 'authentication_error', param: null, code: 'invalid_api_key' } });
    await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ disabled: false }).expect(200);
    expect((await models(created.key)).status).toBe(200);
  });

  it('takes an expiry with any offset and keeps it as the same instant in UTC', async () => {
    const { body: created } = await create({ team: 'team-c', expiresAt: '2999-01-01T02:30:00+02:30' });
    expect(created.expiresAt).toBe('2999-01-01T00:00:00.000Z');
    const patched = await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ expiresAt: '2998-12-31T19:00:00-05:00' }).expect(200);
    expect(patched.body.expiresAt).toBe('2999-01-01T00:00:00.000Z');
  });

  it('refuses an expired key with 401 saying when it expired, from its expiresAt instant on', async () => {
    const { body: created } = await create({ team: 'team-c' });
    const soon = new Date(Date.now() + 60_000).toISOString();
    await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ expiresAt: soon }).expect(200);
    // Expiry is checked when a request arrives, by Date.now(): the gateway runs in this process,
    // so a frozen fake Date puts the request exactly at the boundary (timers stay real).
    try {
      vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(soon) - 1 });
      expect((await models(created.key)).status).toBe(200);
      vi.setSystemTime(Date.parse(soon));
      const refused = await models(created.key);
      expect(refused.status).toBe(401);
      expect(refused.body.error.message).toBe(`This API key expired at ${soon}.`);
    } finally {
      vi.useRealTimers();
    }
  });

  it('rotates: the new secret works, the old one stops at once without overlap', async () => {
    const { body: created } = await create({ team: 'team-c' });
    const rotated = await request(stack.gw.url).post(`/admin/keys/${created.id}/rotate`).set(admin).send({});
    expect(rotated.status).toBe(200);
    expect(rotated.body).toMatchObject({ id: created.id, key: expect.stringMatching(SECRET) });
    expect(rotated.body.key).not.toBe(created.key);
    expect((await models(rotated.body.key)).status).toBe(200);
    const old = await models(created.key);
    expect(old.status).toBe(401);
    expect(old.body.error.message).toBe('Incorrect API key provided.');
  });

  it('revokes for good: 204, then 401 saying so, gone from the API, and the id is never reused', async () => {
    const { body: created } = await create({ team: 'team-c' });
    const revoked = await request(stack.gw.url).delete(`/admin/keys/${created.id}`).set(admin);
    expect(revoked.status).toBe(204);
    expect(revoked.text).toBe('');
    const refused = await models(created.key);
    expect(refused.status).toBe(401);
    expect(refused.body.error.message).toBe('This API key has been revoked.');
    expect((await request(stack.gw.url).get(`/admin/keys/${created.id}`).set(admin)).status).toBe(404);
    expect((await request(stack.gw.url).delete(`/admin/keys/${created.id}`).set(admin)).status).toBe(404);
    expect((await request(stack.gw.url).post(`/admin/keys/${created.id}/rotate`).set(admin).send({})).status).toBe(404);
  });

  it.each([
    [{}, 'team', 'team: Invalid input: expected string, received undefined'],
    [{ team: 'a/b' }, 'team', 'team: must be 1-128 of [A-Za-z0-9._-]'],
    [{ team: 't', projects: [] }, 'projects', 'projects: must name at least one project (or "*")'],
    [{ team: 't', limits: { rpm: -1 } }, 'limits.rpm', 'limits.rpm: Too small: expected number to be >0'],
    [{ team: 't', limits: { rpx: 1 } }, 'rpx', 'limits: unknown field(s) "rpx"'],
    [{ team: 't', expiresAt: 'tomorrow' }, 'expiresAt', 'expiresAt: must be an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z'],
    [{ team: 't', expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt', 'expiresAt: must be in the future'],
    // Without an offset the instant depends on whose clock reads it: refused, not guessed as UTC.
    [{ team: 't', expiresAt: '2999-01-01T00:00:00' }, 'expiresAt', 'expiresAt: must be an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z'],
    [{ team: 't', description: 'd'.repeat(1001) }, 'description', 'description: must be at most 1000 characters'],
    [{ team: 't', secret: 'mine' }, 'secret', 'body: unknown field(s) "secret"'],
  ])('answers 400 invalid_request naming the field for %j', async (body, param, message) => {
    const res = await request(stack.gw.url).post('/admin/keys').set(admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });
  });

  it.each([
    [{}, 'body', 'body: name at least one field to change: projects, defaultProject, limits, models, expiresAt, description, disabled'],
    [{ team: 'team-b' }, 'team', 'body: unknown field(s) "team"'],
    [{ team: 'team-b', description: 'moved' }, 'team', 'body: unknown field(s) "team"'],
    [{ id: 'key-0000000000000000' }, 'id', 'body: unknown field(s) "id"'],
    [{ source: 'config' }, 'source', 'body: unknown field(s) "source"'],
    [{ projects: [] }, 'projects', 'projects: must name at least one project (or "*")'],
    [{ projects: ['a/b'] }, 'projects[0]', 'projects[0]: must be 1-128 of [A-Za-z0-9._-]'],
    [{ limits: { rpm: -1 } }, 'limits.rpm', 'limits.rpm: Too small: expected number to be >0'],
    [{ expiresAt: '2001-01-01T00:00:00Z' }, 'expiresAt', 'expiresAt: must be in the future'],
    [{ disabled: 'yes' }, 'disabled', 'disabled: Invalid input: expected boolean, received string'],
  ])('answers PATCH with 400 invalid_request naming the field for %j, and changes nothing', async (body, param, message) => {
    const { body: created } = await create({ team: 'team-c', description: 'before' });
    const res = await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send(body);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });
    const { key: _secret, ...record } = created as Record<string, unknown>;
    expect((await request(stack.gw.url).get(`/admin/keys/${created.id}`).set(admin)).body).toEqual(record);
  });

  it('never moves a key to another team: PATCH with team is 400, and the key still acts for its own team only', async () => {
    const { body: created } = await create({ team: 'team-c' });
    const res = await request(stack.gw.url).patch(`/admin/keys/${created.id}`).set(admin).send({ team: 'team-b' });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: 'body: unknown field(s) "team"', type: 'invalid_request_error', param: 'team', code: 'invalid_request' } });
    expect((await request(stack.gw.url).get(`/admin/keys/${created.id}`).set(admin)).body.team).toBe('team-c');
    const chat = (project: string) =>
      request(stack.gw.url)
        .post('/v1/chat/completions')
        .set('authorization', bearer(created.key as string))
        .set('openai-project', project)
        .send({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect((await chat('team-c/rl')).status).toBe(200);
    const foreign = await chat('team-b/rl');
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({
      error: { message: 'This key belongs to team "team-c" and cannot act for team "team-b".', type: 'permission_error', param: 'OpenAI-Project', code: 'project_forbidden' },
    });
  });

  it('answers 400 for a body that is not JSON, and for a rotation overlap past a day', async () => {
    const notJson = await request(stack.gw.url).post('/admin/keys').set(admin).set('content-type', 'application/json').send('{"team":');
    expect(notJson.status).toBe(400);
    expect(notJson.body.error).toMatchObject({ code: 'invalid_request', param: 'body', message: 'The body is not valid JSON.' });
    const { body: created } = await create({ team: 'team-c' });
    const rotate = (overlapSeconds: number) => request(stack.gw.url).post(`/admin/keys/${created.id}/rotate`).set(admin).send({ overlapSeconds });
    const invalid = (message: string) => ({ error: { message, type: 'invalid_request_error', param: 'overlapSeconds', code: 'invalid_request' } });
    const tooLong = await rotate(86_401);
    expect(tooLong.status).toBe(400);
    expect(tooLong.body).toEqual(invalid('overlapSeconds: must be at most 86400 (one day)'));
    expect((await rotate(1.5)).body).toEqual(invalid('overlapSeconds: must be a whole number of seconds'));
  });

  it('refuses API keys with 403 admin_required, and a wrong method with 405 before asking for a key', async () => {
    const res = await request(stack.gw.url).post('/admin/keys').set('authorization', bearer(KEYS.teamA)).send({ team: 'team-a' });
    expect(res.status).toBe(403);
    expect(res.body.error.code).toBe('admin_required');
    const wrong = await request(stack.gw.url).put('/admin/keys');
    expect(wrong.status).toBe(405);
    expect(wrong.headers.allow).toBe('GET, POST');
  });

  it('serves the openai client with a key made through the API: chat, stream, models', async () => {
    const { body: created } = await create({ team: 'team-c', projects: ['sdk'] });
    const client = new OpenAI({ apiKey: created.key, baseURL: `${stack.gw.url}/v1`, project: 'team-c/sdk', maxRetries: 0 });
    const reply = await client.chat.completions.create({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }] });
    expect(reply.usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });
    const stream = await client.chat.completions.create({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }], stream: true });
    let text = '';
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
    expect(text).toBe('tok0 tok1 tok2 ');
    const list = await client.models.list();
    expect(list.data.map((m) => m.id)).toEqual(['OpenPipe/Qwen3-14B-Instruct', 'meta-llama/Llama-3.1-8B-Instruct']);
  });

  it('records every write in the audit log, failed ones with their code, and never a secret', async () => {
    await stack.gw.gateway.settled();
    const today = utcDay();
    const res = await request(stack.gw.url).get(`/admin/audit?from=${today}&to=${today}`).set(admin);
    expect(res.status).toBe(200);
    const entries = res.body.data as Array<{ at: string; actor: string; action: string; target: string; result: string; requestId: string }>;
    const actions = new Set(entries.map((e) => `${e.action} ${e.result}`));
    for (const seen of ['key.create ok', 'key.update ok', 'key.update read_only_key', 'key.update key_not_found', 'key.rotate ok', 'key.revoke ok', 'key.revoke key_not_found', 'key.create invalid_request']) {
      expect(actions).toContain(seen);
    }
    expect(entries.every((e) => e.actor === 'ops' && ISO.test(e.at) && e.requestId.length > 0)).toBe(true);
    const byAction = await request(stack.gw.url).get(`/admin/audit?from=${today}&to=${today}&action=key.revoke`).set(admin);
    expect(new Set((byAction.body.data as Array<{ action: string }>).map((e) => e.action))).toEqual(new Set(['key.revoke']));
    // Nowhere in the database: the raw bytes of the SQLite file and its write-ahead log.
    const path = stack.gw.config.database.path;
    const raw = Buffer.concat([readFileSync(path), ...(existsSync(`${path}-wal`) ? [readFileSync(`${path}-wal`)] : [])]);
    expect(secrets.length).toBeGreaterThan(5);
    for (const secret of secrets) expect(raw.includes(secret)).toBe(false);
    // The digests are there: the check above can see what the file holds.
    expect(raw.includes(digest(secrets[0]!))).toBe(true);
  });
});
