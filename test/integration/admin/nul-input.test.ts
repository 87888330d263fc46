import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, tempDatabasePath, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';

const admin = { authorization: bearer(KEYS.admin) };
const today = utcDay();
const inBody = (param: string, message = `${param}: must not contain NUL (U+0000)`) => ({ error: { message, type: 'invalid_request_error', param, code: 'invalid_request' } });
const inQuery = (param: string) => ({ error: { message: `Query parameter "${param}" must not contain NUL (%00).`, type: 'invalid_request_error', param, code: 'invalid_query' } });
const inPath = { error: { message: 'The request path contains an encoded NUL (%00), which is not allowed.', type: 'invalid_request_error', param: null, code: 'invalid_path' } };

type Call = [name: string, method: 'get' | 'post' | 'put' | 'patch', url: string, body: Record<string, unknown> | undefined, answer: unknown];
const CALLS: Call[] = [
  ['a key description', 'post', '/admin/keys', { team: 'team-a', description: 'a\u0000b' }, inBody('description')],
  ['a team description', 'post', '/admin/teams', { id: 'team-z', description: 'a\u0000b' }, inBody('description')],
  ['an admin key description', 'post', '/admin/admin-keys', { role: 'viewer', description: 'a\u0000b' }, inBody('description')],
  ['a model name given on adoption', 'put', '/admin/resources/model/m-1', { team: 'team-a', project: 'rl', artifact: 'acme/rl/a\u0000b' }, inBody('artifact')],
  ['a limit name', 'patch', '/admin/keys/key-x', { limits: { 'r\u0000pm': 1 } }, inBody('limits.r\u0000pm')],
  ['a resource id in the path', 'put', '/admin/resources/model/a%00b', { team: 'team-a', project: 'rl' }, inPath],
  ['a key id in the path', 'get', '/admin/keys/a%00b', undefined, inPath],
  // The URL's last three characters, with no query after them: the path check must read to the very end.
  ['a key id ending the path', 'get', '/admin/keys/abc%00', undefined, inPath],
  ['a query filter', 'get', `/admin/resources?team=a%00b`, undefined, inQuery('team')],
  ['an audit filter', 'get', `/admin/audit?from=${today}&to=${today}&action=a%00b`, undefined, inQuery('action')],
];

/**
 * A NUL (U+0000) anywhere in an admin request is a 400 naming where, on both stores: PostgreSQL's
 * text cannot hold it (it answered 500 before), and SQLite would have stored what PostgreSQL refuses.
 */
describe.each(['sqlite', 'postgres'] as const)('NUL in admin requests (%s)', (dialect) => {
  let database: TestDatabase | undefined;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  beforeAll(async () => {
    if (dialect === 'postgres') database = await createTestDatabase();
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    gw = await startGateway(testConfig({ service: service.url, inference: inference.url }, { database: database ? { url: database.url } : { path: tempDatabasePath() } }));
  });
  afterAll(async () => {
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
    await database?.drop();
  });

  it.each(CALLS)('refuses %s with 400', async (_name, method, url, body, answer) => {
    const call = request(gw.url)[method](url).set(admin);
    const res = await (body === undefined ? call : call.send(body));
    expect([res.status, res.body]).toEqual([400, answer]);
  });

  it('names the body itself when the body is a JSON string holding a NUL, and leaves one without to the route', async () => {
    const post = (json: string) => request(gw.url).post('/admin/keys').set(admin).set('content-type', 'application/json').send(json);
    const withNul = await post('"a\\u0000b"');
    expect([withNul.status, withNul.body]).toEqual([400, inBody('body')]);
    const without = await post('"ab"');
    expect([without.status, without.body]).toEqual([400, inBody('body', 'body: Invalid input: expected object, received string')]);
  });

  it('answers 400 invalid_path for an encoded NUL in a /v1 path, and forwards nothing', async () => {
    const before = service.started;
    const res = await request(gw.url).get('/v1/preview/models/a%00b/checkpoints').set('authorization', bearer(KEYS.teamA));
    expect([res.status, res.body]).toEqual([400, inPath]);
    expect(service.started).toBe(before);
  });

  it('still takes the same requests without the NUL', async () => {
    expect((await request(gw.url).post('/admin/keys').set(admin).send({ team: 'team-a', description: 'ab' })).status).toBe(201);
    expect((await request(gw.url).put('/admin/resources/model/ab').set(admin).send({ team: 'team-a', project: 'rl', artifact: 'acme/rl/ab' })).status).toBe(200);
    expect((await request(gw.url).get(`/admin/audit?from=${today}&to=${today}&action=key.create`).set(admin)).status).toBe(200);
  });
});
