import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createGateway, type Gateway } from '../../../src/app.js';
import { createGatewayServer } from '../../../src/server.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { testConfig } from '../../helpers/gateway.js';
import { jsonLineSink } from '../../helpers/log-lines.js';
import { bearer, KEYS } from '../../helpers/keys.js';

const INVALID_PATH = {
  error: {
    message: 'The request path is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes.',
    type: 'invalid_request_error',
    param: null,
    code: 'invalid_path',
  },
};

/** Every admin route with a path parameter (ADMIN_ROUTES in src/admin/routes.ts), with a malformed value in each parameter. */
const ADMIN_PATH_PARAM_ROUTES: ReadonlyArray<[method: 'get' | 'patch' | 'delete' | 'post' | 'put', path: string]> = [
  ['get', '/admin/keys/%ZZ'],
  ['patch', '/admin/keys/%E0%A4%A'],
  ['delete', '/admin/keys/%'],
  ['post', '/admin/keys/%C0%AF/rotate'],
  ['put', '/admin/resources/model/%ZZ'],
  ['delete', '/admin/resources/%FF/abc'],
];

/**
 * SPEC 9: malformed client input is a 4xx on every route, /admin included, and writes no stack
 * to the log — with or without a key, so nobody can use it to flood the log.
 */
describe('malformed input', () => {
  const lines: Array<Record<string, unknown>> = [];
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gateway: Gateway;
  let server: Server;
  let url: string;

  beforeAll(async () => {
    service = await startTrainingService();
    inference = await startInferenceHost();
    const sink = jsonLineSink(lines);
    const config = testConfig({ service: service.url, inference: inference.url });
    gateway = await createGateway(config, { logger: pino({ level: 'trace' }, sink) });
    server = createGatewayServer(config, gateway.handleRequest).listen(0, '127.0.0.1');
    await once(server, 'listening');
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    lines.length = 0;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await gateway.close();
    await Promise.all([service.close(), inference.close()]);
  });

  /** No line at warn level or above, and nothing that carries a stack. */
  const expectNoStackLogged = (): void => {
    expect(lines.filter((line) => (line.level as number) >= 40)).toEqual([]);
    expect(lines.filter((line) => JSON.stringify(line).includes('stack'))).toEqual([]);
  };

  for (const [method, path] of ADMIN_PATH_PARAM_ROUTES) {
    for (const [who, authorization] of [['without a key', undefined], ['with an admin key', bearer(KEYS.admin)]] as const) {
      it(`answers ${method.toUpperCase()} ${path} ${who} with 400 invalid_path and logs no stack`, async () => {
        const call = request(url)[method](path);
        if (authorization) call.set('authorization', authorization);
        const res = await call;
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toBe('application/json');
        expect(res.body).toEqual(INVALID_PATH);
        expectNoStackLogged();
      });
    }
  }

  it('answers an unknown path with bad percent-encoding outside /v1 with 400 invalid_path', async () => {
    const res = await request(url).get('/admin/nothing/%ZZ');
    expect([res.status, res.body]).toEqual([400, INVALID_PATH]);
    expectNoStackLogged();
  });

  it.each([
    ['/admin/keys?team=%ZZ', 'team', 'Query parameter "team" must be 1-128 of [A-Za-z0-9._-], got "%ZZ".'],
    ['/admin/usage?from=%E0%A4%A&to=2026-01-01', 'from', 'Query parameter "from" must be a calendar day as YYYY-MM-DD, got "\ufffd%A".'],
    ['/admin/resources?kind=%', 'kind', 'Query parameter "kind" must be a resource kind (model, training_job, or a kind of a config route), got "%".'],
  ])('answers bad percent-encoding in the query of %s with 400 invalid_query naming %s', async (path, param, message) => {
    const res = await request(url).get(path).set('authorization', bearer(KEYS.admin));
    expect([res.status, res.body]).toEqual([400, { error: { message, type: 'invalid_request_error', param, code: 'invalid_query' } }]);
    expectNoStackLogged();
  });

  it('answers a gzip body that does not inflate with 400 invalid_request, not 500', async () => {
    const res = await request(url)
      .post('/admin/keys')
      .set('authorization', bearer(KEYS.admin))
      .set('content-type', 'application/json')
      .set('content-encoding', 'gzip')
      .send('not gzip at all');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: { message: 'The body could not be decoded (content-encoding).', type: 'invalid_request_error', param: 'body', code: 'invalid_request' },
    });
    expectNoStackLogged();
  });

  const bodyError = (status: number, message: string, code = 'invalid_request', type = 'invalid_request_error', param: string | null = 'body') => [status, { error: { message, type, param, code } }];
  const DEEP = 20_000;
  it.each([
    ['a body past 64 KB', { 'content-type': 'application/json' }, JSON.stringify({ team: 'team-a', description: 'x'.repeat(70_000) }), bodyError(413, 'The body exceeds the limit of 64 KB for admin requests.', 'request_too_large', 'invalid_request_error', null)],
    ['a charset other than UTF-8', { 'content-type': 'application/json; charset=latin1' }, '{"team":"team-a"}', bodyError(400, 'The body must be UTF-8 JSON.')],
    ['a content-encoding it does not take', { 'content-type': 'application/json', 'content-encoding': 'compress' }, '{"team":"team-a"}', bodyError(400, 'The body could not be decoded (content-encoding).')],
    // A JSON value that is not an object is read (not refused as "not JSON"), so the route says what it wanted.
    ['a JSON null', { 'content-type': 'application/json' }, 'null', bodyError(400, 'team: Invalid input: expected string, received undefined', 'invalid_request', 'invalid_request_error', 'team')],
    // Past the call stack of a recursive walk: a 500 with a stack before the walk for NULs became a loop.
    [`an array ${DEEP} deep`, { 'content-type': 'application/json' }, `{"team":"team-a","description":${'['.repeat(DEEP)}${']'.repeat(DEEP)}}`, bodyError(400, 'description: Invalid input: expected string, received array', 'invalid_request', 'invalid_request_error', 'description')],
    [`a NUL ${DEEP} arrays deep`, { 'content-type': 'application/json' }, `{"team":"team-a","description":${'['.repeat(DEEP)}"\\u0000"${']'.repeat(DEEP)}}`, bodyError(400, `description${'.0'.repeat(DEEP)}: must not contain NUL (U+0000)`, 'invalid_request', 'invalid_request_error', `description${'.0'.repeat(DEEP)}`)],
  ] as const)('answers an admin write with %s as the 4xx it is, and logs no stack', async (_name, headers, body, answer) => {
    const res = await request(url).post('/admin/keys').set('authorization', bearer(KEYS.admin)).set(headers).send(body);
    expect([res.status, res.body]).toEqual(answer);
    expectNoStackLogged();
  });

  it('does not read a body on a route that takes none', async () => {
    const res = await request(url).delete('/admin/keys/no-such-key').set('authorization', bearer(KEYS.admin)).set('content-type', 'application/json').send('{ not json');
    expect([res.status, res.body.error.code]).toEqual([404, 'key_not_found']);
  });

  it('answers the admin API without x-powered-by or an etag, with the client’s x-request-id', async () => {
    const res = await request(url).get('/admin/keys').set('authorization', bearer(KEYS.admin)).set('x-request-id', 'req-admin-7');
    expect(res.status).toBe(200);
    expect([res.headers['x-powered-by'], res.headers['etag'], res.headers['x-request-id']]).toEqual([undefined, undefined, 'req-admin-7']);
  });

  it.each([
    ['delete', '/v1/preview/models/%ZZ'],
    ['get', '/v1/preview/models/%ZZ/checkpoints'],
    ['get', '/v1/preview/training-jobs/%E0%A4%A'],
    ['get', '/v1/preview/training-jobs/%/events'],
  ] as const)('answers %s %s with 400 invalid_path before auth, and forwards nothing', async (method, path) => {
    const before = service.requests.length;
    const res = await request(url)[method](path).set('authorization', bearer(KEYS.teamA));
    expect([res.status, res.body]).toEqual([400, INVALID_PATH]);
    const anonymous = await request(url)[method](path);
    expect([anonymous.status, anonymous.body]).toEqual([400, INVALID_PATH]);
    expect(service.requests.length).toBe(before);
    expectNoStackLogged();
  });
});
