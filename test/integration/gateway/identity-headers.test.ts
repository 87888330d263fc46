import { writeFileSync } from 'node:fs';
import { SignJWT } from 'jose';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import type { RecordedRequest } from '../../fixtures/fake-upstream.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startGateway, startStack, tempDatabasePath } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

type Stack = Awaited<ReturnType<typeof startStack>>;
const SECRET = 'a-very-long-test-secret-for-hs256-signing!!';
const FORGED = { 'x-tollgate-team': 'team-b', 'x-tollgate-project': 'billing', 'x-tollgate-key-id': 'root' };

/** The identity headers as the upstream received them (undefined: absent), and how often each name came. */
const identityOf = (received: RecordedRequest) => ({
  team: received.headers['x-tollgate-team'],
  project: received.headers['x-tollgate-project'],
  keyId: received.headers['x-tollgate-key-id'],
  copies: received.rawHeaders.filter((name, i) => i % 2 === 0 && name.toLowerCase().startsWith('x-tollgate-')).length,
});

/** SPEC 15: `upstreams.<name>.identityHeaders` tells an upstream who the gateway admitted; clients can never say it themselves. */
describe('identity headers upstream', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({
      upstreams: { service: { identityHeaders: true } },
      auth: { jwt: { secret: SECRET, audience: 'tollgate', algorithms: ['HS256'] } },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  const jwt = (subject: string) =>
    new SignJWT({ team: 'team-j', projects: ['rl'] }).setProtectedHeader({ alg: 'HS256' }).setAudience('tollgate').setSubject(subject).setExpirationTime('5m').sign(new TextEncoder().encode(SECRET));

  it('sends team, project and key id to an upstream that has them on', async () => {
    const res = await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.teamA)).set('OpenAI-Project', 'team-a/research');
    expect(res.status).toBe(200);
    expect(identityOf(stack.service.last)).toEqual({ team: 'team-a', project: 'research', keyId: 'team-a-bot', copies: 3 });
  });

  it('names the default project when the request has no project header', async () => {
    await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.teamAProdOnly)).expect(200);
    expect(identityOf(stack.service.last)).toEqual({ team: 'team-a', project: 'prod', keyId: 'team-a-prod', copies: 3 });
  });

  it('sends the gateway\'s values only when the client sent forged ones', async () => {
    await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.teamA)).set(FORGED).expect(200);
    expect(identityOf(stack.service.last)).toEqual({ team: 'team-a', project: 'default', keyId: 'team-a-bot', copies: 3 });
  });

  it('sends a JWT subject as the key id, percent-encoding what is not visible ASCII (and %)', async () => {
    await request(stack.gw.url).get('/v1/health').set('authorization', bearer(await jwt('alice@acme'))).expect(200);
    expect(identityOf(stack.service.last)).toEqual({ team: 'team-j', project: 'rl', keyId: 'alice@acme', copies: 3 });
    await request(stack.gw.url).get('/v1/health').set('authorization', bearer(await jwt('Zoë 100%\r\nx: y'))).expect(200);
    expect(identityOf(stack.service.last).keyId).toBe('Zo%C3%AB%20100%25%0D%0Ax:%20y');
    expect(decodeURIComponent(identityOf(stack.service.last).keyId as string)).toBe('Zoë 100%\r\nx: y');
  });

  it('removes client copies on an upstream that has them off, and adds none', async () => {
    const res = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamA)).set(FORGED);
    expect(res.status).toBe(200);
    expect(identityOf(stack.inference.last)).toEqual({ team: undefined, project: undefined, keyId: undefined, copies: 0 });
  });
});

describe('identity headers off (the default)', () => {
  it('are not sent, and client copies are removed', async () => {
    const stack = await startStack();
    try {
      expect(stack.gw.config.upstreams.service.identityHeaders).toBe(false);
      await request(stack.gw.url).get('/v1/health').set('authorization', bearer(KEYS.teamA)).set(FORGED).expect(200);
      expect(identityOf(stack.service.last)).toEqual({ team: undefined, project: undefined, keyId: undefined, copies: 0 });
    } finally {
      await stack.close();
    }
  });

  it('turn on with a config reload, for new requests', async () => {
    const inference = await startInferenceHost();
    const databasePath = tempDatabasePath();
    const yaml = (on: boolean) =>
      `upstreams: {service: {url: "http://127.0.0.1:9"}, inference: {url: "${inference.url}", identityHeaders: ${on}}}\n` +
      `auth: {keys: ${JSON.stringify(KEY_ENTRIES)}, admin: {keys: ${JSON.stringify(ADMIN_ENTRIES)}}}\n` +
      `database: {path: "${databasePath}"}\nlogging: {level: silent}\n`;
    const path = writeTempConfig(yaml(false));
    const gw = await startGateway(loadConfig(path), path);
    try {
      await request(gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamB)).expect(200);
      expect(identityOf(inference.last).copies).toBe(0);
      writeFileSync(path, yaml(true));
      const reload = await request(gw.url).post('/admin/config/reload').set('authorization', bearer(KEYS.admin));
      expect([reload.status, reload.body]).toEqual([200, { status: 'reloaded', changed: ['upstreams.inference'], restartRequired: [] }]);
      await request(gw.url).get('/v1/models').set('authorization', bearer(KEYS.teamB)).expect(200);
      expect(identityOf(inference.last)).toEqual({ team: 'team-b', project: 'default', keyId: 'team-b-bot', copies: 3 });
    } finally {
      await gw.close();
      await inference.close();
    }
  });
});
