import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig, parseConfig } from '../../../src/config/index.js';
import { jsonPointerProblem, parseJsonPointer, valueAt } from '../../../src/json-pointer.js';
import { configRouteSpec, createRouteTable, pathParam, routeOf, ROUTES, templatesOverlap, type RouteSpec } from '../../../src/proxy/index.js';

const upstreams = 'upstreams: {service: {url: "http://svc:9000", auth: {bearer: k}}, inference: {url: "http://inf:9001"}}\n';

/** The first line of the config error for these routes, or 'ok'. */
function verdict(routes: string): string {
  try {
    parseConfig(`${upstreams}routes:\n${routes}`, {});
    return 'ok';
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}

const route = (fields: string): string => `  - { ${fields} }\n`;
const guarded = 'upstream: service, ownership: { checks: { param: run_id, kind: run } }';

describe('SPEC 23 at start-up: pointers, custom methods, checks-response, ledger', () => {
  it('reads creates: { kind, id }, checks-response and ledger into the route table entry, pointers parsed once', () => {
    const config = parseConfig(
      `${upstreams}routes:
  - { path: /v1/training/runs, methods: [POST], upstream: service, ownership: { creates: { kind: run, id: /run_id } } }
  - { path: "/v1/training/runs:resolve", methods: [POST], upstream: service, ownership: { checks-response: { kind: run, id: "/data/0/run~1id" } } }
  - { path: "/v1/training/runs/{run_id}/events", methods: [GET], upstream: service, limited: false, ledger: true, ownership: { checks: { param: run_id, kind: run } } }
  - { path: "/v1/training/runs/{run_id}/optim_step", methods: [POST], upstream: service, ownership: { checks: { param: run_id, kind: run }, creates: { kind: operation } } }
`,
      {},
    );
    expect(config.routes.map(configRouteSpec).map((r) => [r.template, r.limited, r.ledger, r.metering, r.ownership])).toEqual([
      ['/v1/training/runs', true, undefined, 'requests', { creates: { kind: 'run', id: ['run_id'] } }],
      ['/v1/training/runs:resolve', true, undefined, 'requests', { checksResponse: { kind: 'run', id: ['data', '0', 'run/id'] } }],
      ['/v1/training/runs/{run_id}/events', false, true, 'requests', { checks: { param: 'run_id', kind: 'run' } }],
      ['/v1/training/runs/{run_id}/optim_step', true, undefined, 'requests', { checks: { param: 'run_id', kind: 'run' }, creates: { kind: 'operation', id: ['id'] } }],
    ]);
  });

  it('refuses a pointer that is not one, a verb with odd characters, a verb that is a parameter or not last, with the key path', () => {
    const cases: Array<[string, string]> = [
      [route('path: /v1/a, methods: [POST], upstream: service, ownership: { creates: { kind: run, id: run_id } }'), 'routes[0].ownership.creates.id: "run_id" is not a JSON pointer (RFC 6901): it must be empty or start with /, e.g. /run_id'],
      [route('path: /v1/a, methods: [POST], upstream: service, ownership: { checks-response: { kind: run, id: "/a~2b" } }'), 'routes[0].ownership.checks-response.id: "/a~2b" is not a JSON pointer (RFC 6901): ~ must be followed by 0 or 1 (~0 is ~, ~1 is /)'],
      [route(`path: "/v1/runs/{run_id}:clo-se", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:clo-se": the verb "clo-se" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
      [route(`path: "/v1/runs/{run_id}:close:now", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:close:now": the verb "close:now" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
      [route(`path: "/v1/runs/{run_id}:", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:": the verb "" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
      [route(`path: "/v1/runs/{run_id}:{verb}", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:{verb}": a custom method\'s verb is a fixed word, not a {parameter}'],
      [route(`path: "/v1/runs/{run_id}:close/events", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:close": a ":verb" (custom method) may only end the template\'s last segment, with no /* after it'],
      [route(`path: "/v1/runs/{run_id}:close/*", methods: [POST], ${guarded}`), 'routes[0].path: segment "{run_id}:close": a ":verb" (custom method) may only end the template\'s last segment, with no /* after it'],
      [route('path: "/v1/runs/{run_id:close}", methods: [POST], upstream: service, ownership: unguarded'), 'routes[0].path: segment "{run_id:close}": the verb "close}" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
      [route('path: "/v1/preview/models/{id}:close", methods: [POST], upstream: service, ownership: unguarded'), 'ok'],
      [route('path: "/v1/preview/models:close", methods: [POST], upstream: service, ownership: unguarded'), 'ok'],
    ];
    for (const [routes, message] of cases) expect(verdict(routes)).toBe(message === 'ok' ? 'ok' : `config: ${message}`);
  });

  it('counts verbs in overlaps: a verb meets only the same verb; a trailing /* takes any', () => {
    const cases: Array<[string, string, boolean]> = [
      ['/v1/training/runs/{run_id}:close', '/v1/training/runs/{run_id}/*', false],
      ['/v1/training/runs/{run_id}:close', '/v1/training/runs/{id}', false],
      ['/v1/training/runs/{run_id}:close', '/v1/training/runs/x:close', true],
      ['/v1/training/runs/{run_id}:close', '/v1/training/runs/{id}:cancel', false],
      ['/v1/training/runs:resolve', '/v1/training/runs', false],
      ['/v1/training/runs:resolve', '/v1/training/{collection}', false],
      ['/v1/training/runs:resolve', '/v1/training/*', true],
    ];
    for (const [a, b, overlap] of cases) expect([a, b, templatesOverlap(a, b), templatesOverlap(b, a)]).toEqual([a, b, overlap, overlap]);
  });
});

describe('the route table with custom methods', () => {
  const spec = (path: string, methods: string[]): RouteSpec => configRouteSpec({ path, methods: methods as never, upstream: 'service', body: 'stream', limited: true });
  const table = createRouteTable([
    ...ROUTES,
    spec('/v1/training/runs/{run_id}/*', ['GET']),
    spec('/v1/training/runs/{run_id}:close', ['POST']),
    spec('/v1/training/runs:resolve', ['POST']),
    spec('/v1/training/operations/{operation_id}', ['GET']),
    spec('/v1/training/operations/{operation_id}:cancel', ['POST']),
  ]);
  const templateOf = (method: string, url: string): string | undefined => {
    const resolved = routeOf(table, method, url);
    return resolved.refusal ? `${resolved.refusal.status} ${resolved.template ?? ''}`.trim() : resolved.route.template;
  };

  it('matches a verb exactly, never lets a parameter swallow a known verb, and reads the path as the upstream decodes it', () => {
    const cases: Array<[string, string, string | undefined]> = [
      ['POST', '/v1/training/runs/r1:close', '/v1/training/runs/{run_id}:close'],
      ['POST', '/v1/training/runs/r1%3Aclose', '/v1/training/runs/{run_id}:close'],
      ['POST', '/v1/training/runs/r1%3aclose', '/v1/training/runs/{run_id}:close'],
      ['GET', '/v1/training/runs/r1:close', '405 /v1/training/runs/{run_id}:close'],
      ['GET', '/v1/training/runs/r1:close/events', '404'],
      ['GET', '/v1/training/runs/r1:other', '/v1/training/runs/{run_id}/*'],
      ['POST', '/v1/training/runs:resolve', '/v1/training/runs:resolve'],
      ['POST', '/v1/training/runs%3Aresolve', '/v1/training/runs:resolve'],
      ['POST', '/v1/training/runs:close', '404'],
      ['POST', '/v1/training/operations/op1:cancel', '/v1/training/operations/{operation_id}:cancel'],
      ['GET', '/v1/training/operations/op1:cancel', '405 /v1/training/operations/{operation_id}:cancel'],
      ['GET', '/v1/training/operations/op1', '/v1/training/operations/{operation_id}'],
      ['POST', '/v1/training/runs/r1%2F:close', '400'],
    ];
    for (const [method, url, expected] of cases) expect([method, url, templateOf(method, url)]).toEqual([method, url, expected]);
  });

  it('reads a parameter as the upstream will: before the verb, percent-decoded once', () => {
    expect(pathParam('/v1/training/runs/{run_id}:close', '/v1/training/runs/r1%3Aclose', 'run_id')).toBe('r1');
    expect(pathParam('/v1/training/runs/{run_id}:close', '/v1/training/runs/r1:close:close', 'run_id')).toBe('r1:close');
    expect(pathParam('/v1/training/runs/{run_id}/*', '/v1/training/runs/r%25331/x', 'run_id')).toBe('r%331');
    expect(pathParam('/v1/training/runs/{run_id}/*', '/v1/training/runs/%E9/x', 'run_id')).toBeUndefined();
  });
});

describe('JSON pointers (RFC 6901)', () => {
  it('finds values by their tokens, escapes undone, array indexes without leading zeros', () => {
    const doc = { run_id: 'r1', 'a/b': { '~c': 'x' }, data: [{ id: 'd0' }, { id: 'd1' }], '': 'empty' };
    const at = (pointer: string): unknown => valueAt(doc, parseJsonPointer(pointer));
    expect([at('/run_id'), at('/a~1b/~0c'), at('/data/1/id'), at('/data/01/id'), at('/data/-/id'), at('/'), at('/missing/x'), at('/run_id/0')]).toEqual([
      'r1',
      'x',
      'd1',
      undefined,
      undefined,
      'empty',
      undefined,
      undefined,
    ]);
    expect(at('')).toBe(doc);
    expect(valueAt({ ['__proto__']: 1 }, parseJsonPointer('/constructor'))).toBeUndefined();
    expect([jsonPointerProblem(''), jsonPointerProblem('/a~0~1'), jsonPointerProblem('#/a')]).toEqual([undefined, undefined, expect.stringContaining('is not a JSON pointer')]);
  });
});

describe('include: (SPEC 23)', () => {
  const dir = (): string => mkdtempSync(join(tmpdir(), 'tollgate-include-'));
  const configIn = (folder: string, text: string): string => {
    const path = join(folder, 'config.yaml');
    writeFileSync(path, `${upstreams}${text}`);
    return path;
  };
  const loadVerdict = (path: string): string => {
    try {
      loadConfig(path, {});
      return 'ok';
    } catch (err) {
      if (err instanceof ConfigError) return err.message;
      throw err;
    }
  };

  it('puts the included routes first, relative to the including file, then the file\'s own', () => {
    const folder = dir();
    writeFileSync(join(folder, 'preset.yaml'), 'routes:\n  - { path: /v1/training/runs, methods: [POST], upstream: service, ownership: { creates: { kind: run, id: /run_id } } }\n');
    const path = configIn(folder, 'include: [preset.yaml]\nroutes:\n  - { path: /v1/training/extra, methods: [GET], upstream: service, ownership: unguarded }\n');
    expect(loadConfig(path, {}).routes.map((r) => r.path)).toEqual(['/v1/training/runs', '/v1/training/extra']);
  });

  it('loads config/presets/training-api.yaml whole, every service route guarded', () => {
    const config = parseConfig(`${upstreams}include: [config/presets/training-api.yaml]\n`, {});
    expect(config.routes.length).toBe(13);
    expect(config.routes.filter((r) => r.ownership === undefined)).toEqual([]);
  });

  it('refuses a missing file, a file with more than routes, and names an issue in the file it is written in', () => {
    const folder = dir();
    writeFileSync(join(folder, 'extra.yaml'), 'routes: []\nserver: { port: 1 }\n');
    writeFileSync(join(folder, 'good.yaml'), 'routes:\n  - { path: /v1/ok, methods: [GET], upstream: service, ownership: unguarded }\n');
    writeFileSync(join(folder, 'bad.yaml'), 'routes:\n  - { path: /v1/ok, methods: [GET], upstream: service, ownership: unguarded }\n  - { path: "/v1/x/{id}:c@t", methods: [GET], upstream: service, ownership: unguarded }\n');
    const cases: Array<[string, string]> = [
      ['include: [missing.yaml]\n', `include[0]: cannot read ${join(folder, 'missing.yaml')} (no such file)`],
      ['include: [extra.yaml]\n', `include[0]: ${join(folder, 'extra.yaml')}: an included file holds only routes: (a list), nothing else`],
      ['include: presets.yaml\n', 'include: must be a list of file paths (relative to this file), e.g. [presets/training-api.yaml]'],
      ['include: [bad.yaml]\n', 'include bad.yaml: routes[1].path: segment "{id}:c@t": the verb "c@t" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
      ['include: [good.yaml]\nroutes:\n  - { path: /v1/a:b:c, methods: [GET], upstream: service }\n', 'routes[0].path: segment "a:b:c": the verb "b:c" must be a letter, then letters, digits or _ (one ":verb" per segment)'],
    ];
    for (const [text, message] of cases) {
      const path = configIn(folder, text);
      expect(loadVerdict(path)).toBe(`${path}: ${message}`);
    }
  });
});
