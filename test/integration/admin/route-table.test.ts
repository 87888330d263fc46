import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_ROUTES } from '../../../src/admin/index.js';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
type Method = 'get' | 'post' | 'put' | 'patch' | 'delete';
const METHODS: readonly Method[] = ['get', 'post', 'put', 'patch', 'delete'];

/** Each path of the admin route table with its methods in table order: what a 405's `Allow` lists. */
const methodsByPath = new Map<string, string[]>();
for (const route of ADMIN_ROUTES) methodsByPath.set(route.path, [...(methodsByPath.get(route.path) ?? []), route.method]);

/** A URL for a path template: every `:param` given a plain value. */
const urlOf = (path: string): string => path.replace(/:[A-Za-z_]+/g, 'x1');

const notAllowed = (method: string, path: string, allow: string) => ({
  error: { message: `${method} is not allowed on ${path}; use ${allow}.`, type: 'invalid_request_error', param: null, code: 'method_not_allowed' },
});

/**
 * SPEC 7: every admin route answers a wrong method 405 with `Allow` (before any key is asked
 * for), no key 401 and a /v1 key 403 `admin_required`. The cases come from the table itself, so
 * a route added to it is covered without touching this file.
 */
describe('the admin route table', () => {
  let stack: Stack;
  beforeAll(async () => {
    // One address sends a 401 per route here; the flood guard (SPEC 15) is not what is tested.
    stack = await startStack({ auth: { failureLimit: false } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('has routes to check', () => {
    expect(methodsByPath.size).toBeGreaterThan(0);
  });

  for (const [path, methods] of methodsByPath) {
    const allow = methods.join(', ');
    for (const method of METHODS.filter((m) => !methods.includes(m.toUpperCase()))) {
      it(`answers ${method.toUpperCase()} ${path} without a key with 405 and Allow: ${allow}`, async () => {
        const res = await request(stack.gw.url)[method](urlOf(path));
        expect([res.status, res.headers.allow, res.body]).toEqual([405, allow, notAllowed(method.toUpperCase(), path, allow)]);
      });
    }
  }

  for (const route of ADMIN_ROUTES) {
    const method = route.method.toLowerCase() as Method;
    const url = urlOf(route.path);
    it(`answers ${route.method} ${route.path} without a key with 401 invalid_api_key`, async () => {
      const res = await request(stack.gw.url)[method](url);
      expect([res.status, res.headers['www-authenticate'], res.body]).toEqual([
        401,
        'Bearer',
        { error: { message: 'Missing API key: send it as "Authorization: Bearer <key>".', type: 'authentication_error', param: null, code: 'invalid_api_key' } },
      ]);
    });
    it(`answers ${route.method} ${route.path} with a /v1 key with 403 admin_required`, async () => {
      const res = await request(stack.gw.url)[method](url).set('authorization', bearer(KEYS.teamA));
      expect([res.status, res.body]).toEqual([
        403,
        {
          error: {
            message: 'This key is not an admin key; /admin routes need a key from auth.admin.keys.',
            type: 'permission_error',
            param: null,
            code: 'admin_required',
          },
        },
      ]);
    });
  }
});
