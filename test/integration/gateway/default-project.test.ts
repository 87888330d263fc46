import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, parseConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import type { FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, startStack, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig } from '../../helpers/process.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const admin = { authorization: bearer(KEYS.admin) };
const PROD_ONLY = 'tg-test-prod-only-no-default-0001';
const SECRET = 'a-very-long-test-secret-for-hs256-signing!!';
/** Each project's own rpm: which one a request ran as shows in x-ratelimit-limit-requests (no key limits). */
const PROJECT_LIMITS = { 'team-a/prod': { rpm: 71 }, 'team-a/default': { rpm: 72 }, 'team-a/research': { rpm: 73 }, 'team-a/shared': { rpm: 74 } };
const RPM_OF: Record<string, string> = { prod: '71', default: '72', research: '73', shared: '74' };

const defaultProjectRefused = (message: string) => ({ error: { message, type: 'invalid_request_error', param: 'defaultProject', code: 'invalid_request' } });

/** SPEC 6.2: leaving the project header out never reaches a project the key could not name. */
describe('the default project', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      auth: {
        keys: [...KEY_ENTRIES, { id: 'prod-only', sha256: digest(PROD_ONLY), team: 'team-a', projects: ['prod'] }],
        jwt: { secret: SECRET, audience: 'tollgate', algorithms: ['HS256'], defaultProject: 'shared' },
      },
      rateLimits: { projects: PROJECT_LIMITS },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  /** The project a request without the header ran as. */
  const projectOf = async (credential: string): Promise<string | undefined> => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(credential));
    expect(res.status).toBe(200);
    return Object.keys(RPM_OF).find((project) => RPM_OF[project] === res.headers['x-ratelimit-limit-requests']);
  };
  const token = (projects: unknown) =>
    new SignJWT({ team: 'team-a', ...(projects === undefined ? {} : { projects }) })
      .setProtectedHeader({ alg: 'HS256' })
      .setAudience('tollgate')
      .setSubject('alice')
      .setExpirationTime('5m')
      .sign(new TextEncoder().encode(SECRET));

  it('is the first project of a config key that may not use "default" and names none', async () => {
    expect(await projectOf(PROD_ONLY)).toBe('prod');
    const view = await request(stack.gw.url).get('/admin/keys/prod-only').set(admin);
    expect(view.body).toMatchObject({ projects: ['prod'], defaultProject: 'prod', source: 'config' });
  });

  it('is "default" for a key that may use any project', async () => {
    expect(await projectOf(KEYS.teamA)).toBe('default');
  });

  it('is auth.jwt.defaultProject for a token that may use it, else the token\'s own rule', async () => {
    expect(await projectOf(await token(undefined))).toBe('shared');
    expect(await projectOf(await token(['research', 'shared']))).toBe('shared');
    expect(await projectOf(await token(['research', 'prod']))).toBe('research');
    expect(await projectOf(await token('prod research'))).toBe('prod');
  });

  it('refuses a token whose projects claim names no usable project with 401', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(await token(['team-a/prod', ''])));
    expect(res.status).toBe(401);
    expect(res.body).toEqual({
      error: { message: 'The token\'s "projects" claim names no project (1-128 of [A-Za-z0-9._-], or "*").', type: 'authentication_error', param: null, code: 'invalid_api_key' },
    });
  });

  describe('through the admin API', () => {
    const create = (body: Record<string, unknown>) => request(stack.gw.url).post('/admin/keys').set(admin).send(body);
    const patch = (id: string, body: Record<string, unknown>) => request(stack.gw.url).patch(`/admin/keys/${id}`).set(admin).send(body);

    it('gives a new key without one its first project, or "default" when it may use it', async () => {
      const prodOnly = await create({ team: 'team-a', projects: ['prod', 'research'] });
      expect([prodOnly.status, prodOnly.body.defaultProject]).toEqual([201, 'prod']);
      expect(await projectOf(prodOnly.body.key)).toBe('prod');
      const any = await create({ team: 'team-a' });
      expect([any.status, any.body.defaultProject]).toEqual([201, 'default']);
      const withDefault = await create({ team: 'team-a', projects: ['research', 'default'] });
      expect([withDefault.status, withDefault.body.defaultProject]).toEqual([201, 'default']);
    });

    it('refuses to create a key whose defaultProject is not one of its projects: 400 naming defaultProject', async () => {
      const res = await create({ team: 'team-a', projects: ['prod'], defaultProject: 'staging' });
      expect(res.status).toBe(400);
      expect(res.body).toEqual(defaultProjectRefused('defaultProject: "staging" is not one of the key\'s projects (prod); name one of them, or leave it out to use prod'));
    });

    it('refuses a PATCH that leaves the stored defaultProject outside the new projects, unless it names a valid one', async () => {
      const key = await create({ team: 'team-a', projects: ['prod', 'research'], defaultProject: 'research' });
      const dropped = await patch(key.body.id, { projects: ['prod'] });
      expect(dropped.status).toBe(400);
      expect(dropped.body).toEqual(
        defaultProjectRefused('defaultProject: "research" is not one of the key\'s projects (prod); name one of them in the same change'),
      );
      const outside = await patch(key.body.id, { defaultProject: 'staging' });
      expect(outside.status).toBe(400);
      expect(outside.body).toEqual(defaultProjectRefused('defaultProject: "staging" is not one of the key\'s projects (prod, research); name one of them in the same change'));
      expect((await request(stack.gw.url).get(`/admin/keys/${key.body.id}`).set(admin)).body).toMatchObject({ projects: ['prod', 'research'], defaultProject: 'research' });
      const both = await patch(key.body.id, { projects: ['prod'], defaultProject: 'prod' });
      expect([both.status, both.body.projects, both.body.defaultProject]).toEqual([200, ['prod'], 'prod']);
      expect(await projectOf(key.body.key)).toBe('prod');
      const widened = await patch(key.body.id, { projects: ['*'] });
      expect([widened.status, widened.body.defaultProject]).toEqual([200, 'prod']);
    });

    it('answers 404 for an unknown key before judging its projects', async () => {
      const res = await patch('key-0000000000000000', { projects: ['prod'] });
      expect([res.status, res.body.error.code]).toEqual([404, 'key_not_found']);
    });
  });
});

/** A config with a key whose defaultProject is not one of its projects: refused at start-up and on reload. */
describe('a config key naming a defaultProject outside its projects', () => {
  const badKeys = [...KEY_ENTRIES, { id: 'prod-only', sha256: digest(PROD_ONLY), team: 'team-a', projects: ['prod'], defaultProject: 'default' }];
  const yaml = (upstreamUrl: string, keys: unknown, databasePath: string) =>
    `upstreams: {service: {url: "${upstreamUrl}"}, inference: {url: "${upstreamUrl}"}}\n` +
    `auth: {keys: ${JSON.stringify(keys)}, admin: {keys: ${JSON.stringify(ADMIN_ENTRIES)}}}\n` +
    `database: {path: "${databasePath}"}\nlogging: {level: silent}\n`;
  const message = 'auth.keys[3].defaultProject: "default" is not one of the key\'s projects (prod); name one of them, or leave it out to use prod';

  it('stops start-up with exit 1 and one line naming the key path', async () => {
    const path = writeTempConfig(yaml('http://127.0.0.1:9', badKeys, tempDatabasePath()));
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: path, PORT: String(await freePort()) });
    try {
      expect(await proc.exited()).toBe(1);
      expect(proc.output()).toBe(`tollgate: ${path}: ${message}\n`);
    } finally {
      // Should it start after all, it must not outlive the test.
      proc.kill('SIGKILL');
    }
  });

  let service: FakeUpstream;
  let gw: RunningGateway;
  afterAll(async () => {
    await gw?.close();
    await service?.close();
  });

  it('is a 400 invalid_config on reload, and the running keys stay', async () => {
    service = await startInferenceHost();
    const databasePath = tempDatabasePath();
    const path = writeTempConfig(yaml(service.url, KEY_ENTRIES, databasePath));
    gw = await startGateway(loadConfig(path), path);
    writeFileSync(path, yaml(service.url, badKeys, databasePath));
    const res = await request(gw.url).post('/admin/config/reload').set(admin);
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: { message: `${path}: ${message}`, type: 'invalid_request_error', param: null, code: 'invalid_config' } });
    expect((await request(gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA))).status).toBe(200);
  });
});

describe('npm run keygen', () => {
  it('prints an entry that names its default project, which the config accepts as printed', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/keys/keygen.ts', '--team', 'team-a', '--projects', 'prod,research', '--id', 'ci']);
    const entry = stdout.slice(stdout.indexOf('    - id: ci'));
    expect(entry).toMatch(/^ {4}- id: ci\n {6}sha256: "[0-9a-f]{64}"\n {6}team: team-a\n {6}projects: \["prod", "research"\]\n {6}defaultProject: prod\n$/);
    const config = parseConfig(`upstreams: {service: {url: "http://a"}, inference: {url: "http://b"}}\nauth:\n  keys:\n${entry}`, {});
    expect(config.auth.keys[0]).toMatchObject({ id: 'ci', team: 'team-a', projects: ['prod', 'research'], defaultProject: 'prod' });
  });
});
