import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';
import { configRouteSpec, configRoutesProblem, createRouteTable, resolveRoute, ROUTES, templatesOverlap } from '../../../src/proxy/index.js';
import { ownershipPolicy } from '../../../src/ownership/index.js';
import { GatewayError } from '../../../src/errors.js';

const upstreams = (auth = 'passthrough'): string => `upstreams: {service: {url: "http://svc:9000", auth: ${auth}}, inference: {url: "http://inf:9001"}}\n`;
const SHARED = '{bearer: k}';

/**
 * The first line of the config error for these routes, or 'ok': config/ checks each route's shape,
 * proxy/ what needs the built-in table and the ownership policy (as the gateway does when it builds).
 */
function verdict(routes: string, auth = 'passthrough'): string {
  try {
    const config = parseConfig(`${upstreams(auth)}routes:\n${routes}`, {});
    const problem = configRoutesProblem(config.routes, ownershipPolicy(config).enabled);
    return problem === undefined ? 'ok' : `config: ${problem}`;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

describe('routes: (SPEC 20) at start-up', () => {
  it('reads the example of SPEC 20 into entries of the route table, with the defaults', () => {
    const config = parseConfig(
      `${upstreams(SHARED)}routes:
  - path: /v1/training/runs
    methods: [POST]
    upstream: service
    body: stream
    limited: true
    ownership: { creates: run }
  - path: /v1/training/runs/{run_id}/*
    methods: [GET, PUT, POST, DELETE]
    upstream: service
    ownership: { checks: { param: run_id, kind: run } }
  - path: /v1/training/capabilities
    methods: [GET]
    upstream: service
    ownership: unguarded
`,
      {},
    );
    expect(config.routes.map(configRouteSpec)).toEqual([
      { template: '/v1/training/runs', methods: ['POST'], upstream: 'service', body: 'stream', limited: true, metering: 'requests', ownership: { creates: { kind: 'run', id: ['id'] } } },
      { template: '/v1/training/runs/{run_id}/*', methods: ['GET', 'PUT', 'POST', 'DELETE'], upstream: 'service', body: 'stream', limited: true, metering: 'requests', ownership: { checks: { param: 'run_id', kind: 'run' } } },
      { template: '/v1/training/capabilities', methods: ['GET'], upstream: 'service', body: 'stream', limited: true, metering: 'requests' },
    ]);
  });

  it('refuses what cannot be a route with the one-line error naming its key path', () => {
    const route = (fields: string): string => `  - { ${fields} }\n`;
    const cases: Array<[string, string]> = [
      [route('path: /v1/chat/completions/*, methods: [GET], upstream: service'), 'routes[0].path: overlaps the built-in route /v1/chat/completions'],
      [route('path: "/v1/preview/models/{id}/*", methods: [GET], upstream: service'), 'routes[0].path: overlaps the built-in route /v1/preview/models/{model_id}'],
      [route('path: "/v1/{anything}", methods: [GET], upstream: inference'), 'routes[0].path: overlaps the built-in route /v1/models'],
      [route('path: /admin/keys, methods: [GET], upstream: service'), 'routes[0].path: must start with /v1/ (config routes live under /v1)'],
      [route('path: /v1/a/../b, methods: [GET], upstream: service'), 'routes[0].path: must not contain a "." or ".." segment'],
      [route('path: /v1/a//b, methods: [GET], upstream: service'), 'routes[0].path: must not contain an empty segment (//) or end with /'],
      [route('path: /v1/a%2Fb, methods: [GET], upstream: service'), 'routes[0].path: segment "a%2Fb" must be a literal (no %, *, ?, #) or a {name} parameter'],
      [route('path: /v1/a/*/b, methods: [GET], upstream: service'), 'routes[0].path: segment "*" must be a literal (no %, *, ?, #) or a {name} parameter'],
      [route('path: "/v1/a/{id}/{id}", methods: [GET], upstream: service'), 'routes[0].path: parameter {id} appears twice'],
      [route('path: /v1/a, methods: [GET], upstream: billing'), 'routes[0].upstream: unknown upstream "billing" (configured: service, inference)'],
      [route('path: /v1/a, methods: [FETCH], upstream: service'), 'routes[0].methods[0]: must be one of GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS'],
      [route('path: /v1/a, methods: [GET, GET], upstream: service'), 'routes[0].methods: names a method twice'],
      [route('path: /v1/a, methods: [], upstream: service'), 'routes[0].methods: must name at least one method'],
      [route('path: /v1/a, methods: [GET], upstream: service, ownership: { checks: { param: run_id, kind: run } }'), 'routes[0].ownership.checks.param: "run_id" is not a {parameter} of /v1/a'],
      [route('path: /v1/a, methods: [POST], upstream: service, body: json, ownership: { checks-body: { field: run_id, kind: run } }'), 'routes[0].ownership.checks-body: reads the body as it streams: needs body: stream'],
      [route('path: /v1/a, methods: [POST], upstream: service, ownership: { creates: Run }'), 'routes[0].ownership.creates: must be a resource kind: a lowercase letter, then up to 62 of a-z 0-9 _'],
      [route('path: /v1/a, methods: [POST], upstream: service, ownership: {}'), 'routes[0].ownership: name creates, checks, checks-body or checks-response (or say unguarded)'],
      [route('path: /v1/a, methods: [GET], upstream: service, cache: true'), 'routes[0]: unknown key(s) "cache"'],
    ];
    for (const [routes, message] of cases) expect(verdict(routes)).toBe(`config: ${message}`);
  });

  it('while ownership is on, refuses a service route that does not say how it is guarded', () => {
    const bare = '  - { path: /v1/training/x, methods: [GET], upstream: service }\n';
    expect(verdict(bare, SHARED)).toBe(
      'config: routes[0].ownership: ownership is on: a route to the service must say how it is guarded (creates, checks, checks-body) or say unguarded',
    );
    expect(verdict(bare)).toBe('ok');
    expect(verdict('  - { path: /v1/training/x, methods: [GET], upstream: inference }\n', SHARED)).toBe('ok');
    expect(verdict('  - { path: /v1/training/x, methods: [GET], upstream: service, ownership: unguarded }\n', SHARED)).toBe('ok');
  });

  it('loads config/example.yaml with the training-api preset included and its own example route uncommented', () => {
    const text = readFileSync('config/example.yaml', 'utf8');
    const uncommented = text.replace(/^# (routes:|  - |    )/gm, '$1');
    expect(uncommented).not.toBe(text);
    const config = parseConfig(uncommented, {}, 'config/example.yaml', 'config');
    expect(config.routes.map((r) => `${r.methods.join(',')} ${r.path}`)).toEqual([
      'GET /v1/training/capabilities',
      'POST /v1/training/runs',
      'POST /v1/training/runs:resolve',
      'GET /v1/training/runs/{run_id}',
      'POST /v1/training/runs/{run_id}:close',
      'POST /v1/training/runs/{run_id}/data',
      'POST /v1/training/runs/{run_id}/optim_step',
      'POST /v1/training/runs/{run_id}/save_state',
      'GET /v1/training/runs/{run_id}/checkpoints',
      'GET /v1/training/runs/{run_id}/events',
      'GET /v1/training/operations/{operation_id}',
      'GET /v1/training/operations/{operation_id}/result',
      'POST /v1/training/operations/{operation_id}:cancel',
      'GET /v1/training/capabilities',
    ]);
  });
});

describe('templatesOverlap', () => {
  it('is true exactly when some path matches both templates', () => {
    const cases: Array<[string, string, boolean]> = [
      ['/v1/models', '/v1/models', true],
      ['/v1/models', '/v1/models/*', true],
      ['/v1/models', '/v1/{x}', true],
      ['/v1/models', '/v1/training/*', false],
      ['/v1/preview/models/{model_id}/log', '/v1/preview/models/x/*', true],
      ['/v1/preview/models/{model_id}/log', '/v1/preview/models/{a}/checkpoints', false],
      ['/v1/training/runs', '/v1/training/runs/{run_id}/*', false],
      ['/v1/training/runs/{run_id}', '/v1/training/runs/*', true],
      ['/v1/a/b/c', '/v1/a/b', false],
    ];
    for (const [a, b, overlap] of cases) {
      expect([a, b, templatesOverlap(a, b), templatesOverlap(b, a)]).toEqual([a, b, overlap, overlap]);
    }
  });
});

describe('the route table with config routes', () => {
  const runs = configRouteSpec({ path: '/v1/training/runs/{run_id}/*', methods: ['GET', 'DELETE'], upstream: 'service', body: 'stream', limited: true });
  const runPosts = configRouteSpec({ path: '/v1/training/runs/{run_id}/steps', methods: ['POST'], upstream: 'service', body: 'stream', limited: true });
  const table = createRouteTable([...ROUTES, runPosts, runs]);

  it('matches a trailing /* on the parameter itself, a trailing slash and any depth below it', () => {
    for (const path of ['/v1/training/runs/r1', '/v1/training/runs/r1/', '/v1/training/runs/r1/checkpoints/a/b']) {
      expect([path, resolveRoute(table, 'GET', path).template]).toEqual([path, '/v1/training/runs/{run_id}/*']);
    }
    expect(table.match('/v1/training/runs', 'GET')).toBeUndefined();
    expect(resolveRoute(table, 'GET', '/v1/models/').template).toBe('/v1/models');
  });

  it('lets the method choose between routes sharing a path, and lists all their methods in Allow', () => {
    expect(resolveRoute(table, 'POST', '/v1/training/runs/r1/steps').template).toBe('/v1/training/runs/{run_id}/steps');
    expect(resolveRoute(table, 'GET', '/v1/training/runs/r1/steps?x=1').template).toBe('/v1/training/runs/{run_id}/*');
    const refusal = (() => {
      try {
        resolveRoute(table, 'PATCH', '/v1/training/runs/r1/steps');
      } catch (err) {
        return err as GatewayError;
      }
      throw new Error('resolved');
    })();
    expect([refusal.status, refusal.headers]).toEqual([405, { allow: 'POST, GET, DELETE' }]);
  });
});
