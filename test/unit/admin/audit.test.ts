import type { RequestHandler } from 'express';
import request from 'supertest';
import { afterEach, describe, expect, it } from 'vitest';
import { audited, AuditTrail, listAuditHandler } from '../../../src/admin/index.js';
import { RuntimeKeys } from '../../../src/auth/index.js';
import { KeyAdmin, startKeySync, type KeySync } from '../../../src/keys/index.js';
import type { StaticKeyConfig } from '../../../src/config/index.js';
import { errors } from '../../../src/errors.js';
import { createLogger } from '../../../src/observability/index.js';
import { silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { digest } from '../../helpers/keys.js';
import { serveHandlers } from './serve-handlers.js';

/**
 * SPEC 12.3: what `audited` records of an admin write (actor, role, target, result, request id)
 * and what `GET /admin/audit` answers — filtered by actor and action, a team scope's own
 * entries only, 503 while the database is away — over a real SQLite store.
 */

const CONFIG_KEYS: readonly StaticKeyConfig[] = [
  { id: 'team-a-bot', sha256: digest('a'), team: 'team-a', projects: ['*'], defaultProject: 'default', limits: {} },
  { id: 'team-b-bot', sha256: digest('b'), team: 'team-b', projects: ['*'], defaultProject: 'default', limits: {} },
];
const TODAY = new Date().toISOString().slice(0, 10);

describe('the audit log', () => {
  const cleanups: Array<() => Promise<unknown> | unknown> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  /** An app with one audited write route and the audit list, as the admin route table wires them. */
  async function start(options: { open?: boolean } = {}): Promise<{ url: string }> {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    cleanups.push(() => handle.close());
    if (options.open !== false) expect(await handle.open()).toBe(true);
    const keys = new RuntimeKeys();
    const sync: KeySync = startKeySync(handle, keys, { refreshIntervalMs: 60_000, onError: () => undefined });
    cleanups.push(() => sync.stop());
    const trail = new AuditTrail(handle, createLogger('silent'), () => undefined);
    cleanups.push(() => trail.close(Date.now() + 1000));
    const write: RequestHandler = (req, res, next) => {
      if (typeof req.headers['x-request-id'] === 'string') res.setHeader('x-request-id', req.headers['x-request-id']);
      const outcome = String(req.headers['x-outcome'] ?? 'ok');
      if (typeof req.headers['x-target'] === 'string') res.locals.auditTarget = req.headers['x-target'];
      if (outcome === 'ok') res.status(204).end();
      else if (outcome === 'error') next(errors.insufficientRole('viewer', 'change this'));
      else res.status(Number(outcome)).end();
    };
    const server = await serveHandlers((app) => {
      app.post('/things/:id', audited(trail, 'key.update'), write);
      app.post('/things', audited(trail, 'key.create'), write);
      app.get('/admin/audit', listAuditHandler({ handle, trail, keys: new KeyAdmin(handle, keys, sync, () => CONFIG_KEYS) }));
    });
    cleanups.push(() => server.close());
    return { url: server.url };
  }

  const list = async (url: string, query: string, headers: Record<string, string> = {}) => {
    const res = await request(url).get(`/admin/audit?from=${TODAY}&to=${TODAY}${query}`).set(headers);
    expect(res.status).toBe(200);
    return (res.body as { object: string; data: Array<Record<string, string>> }).data.map(({ at, ...rest }) => {
      expect(Date.parse(at ?? '')).toBeGreaterThan(0);
      return rest;
    });
  };

  it('records actor, role, action, target, result and request id of each write, failed ones included', async () => {
    const { url } = await start();
    await request(url).post('/things/key-1').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r1' }).expect(204);
    await request(url).post('/things/key-2').set({ 'x-admin': 'finance:viewer', 'x-request-id': 'r2', 'x-outcome': 'error' }).expect(403);
    await request(url).post('/things/key-3').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r3', 'x-outcome': '409' }).expect(409);
    await request(url).post('/things').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r4', 'x-target': 'key-new' }).expect(204);
    await request(url).post('/things').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r5' }).expect(204);
    await request(url).post('/things/key-6').set({ 'x-request-id': 'r6' }).expect(204);
    await request(url).post('/things/key-7').set({ 'x-admin': 'ops:admin' }).expect(204);
    expect(await list(url, '')).toEqual([
      { actor: 'ops', actorRole: 'admin', action: 'key.update', target: 'key-1', result: 'ok', requestId: 'r1' },
      { actor: 'finance', actorRole: 'viewer', action: 'key.update', target: 'key-2', result: 'insufficient_role', requestId: 'r2' },
      { actor: 'ops', actorRole: 'admin', action: 'key.update', target: 'key-3', result: '409', requestId: 'r3' },
      { actor: 'ops', actorRole: 'admin', action: 'key.create', target: 'key-new', result: 'ok', requestId: 'r4' },
      { actor: 'ops', actorRole: 'admin', action: 'key.create', target: '', result: 'ok', requestId: 'r5' },
      { actor: '', action: 'key.update', target: 'key-6', result: 'ok', requestId: 'r6' },
      { actor: 'ops', actorRole: 'admin', action: 'key.update', target: 'key-7', result: 'ok', requestId: '' },
    ]);
  });

  it('filters by actor, by action, and by both', async () => {
    const { url } = await start();
    await request(url).post('/things/key-1').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r1' }).expect(204);
    await request(url).post('/things').set({ 'x-admin': 'ops:admin', 'x-request-id': 'r2', 'x-target': 'key-2' }).expect(204);
    await request(url).post('/things/key-1').set({ 'x-admin': 'lead:team-admin', 'x-request-id': 'r3' }).expect(204);
    const requestIds = async (query: string) => (await list(url, query)).map((e) => e.requestId);
    expect(await requestIds('&actor=ops')).toEqual(['r1', 'r2']);
    expect(await requestIds('&action=key.update')).toEqual(['r1', 'r3']);
    expect(await requestIds('&actor=ops&action=key.update')).toEqual(['r1']);
    expect(await requestIds('&actor=nobody')).toEqual([]);
  });

  it("shows a team scope the entries about its team and its keys only", async () => {
    const { url } = await start();
    for (const [target, id] of [['team-a', 'r1'], ['team-b', 'r2'], ['team-a-bot', 'r3'], ['team-b-bot', 'r4'], ['config', 'r5']] as const) {
      await request(url).post('/things').set({ 'x-admin': 'ops:admin', 'x-request-id': id, 'x-target': target }).expect(204);
    }
    expect((await list(url, '', { 'x-team-scope': 'team-a' })).map((e) => e.requestId)).toEqual(['r1', 'r3']);
    expect((await list(url, '')).map((e) => e.requestId)).toEqual(['r1', 'r2', 'r3', 'r4', 'r5']);
  });

  it('answers 503 database_unavailable while the database has not been reached', async () => {
    const { url } = await start({ open: false });
    await request(url).post('/things/key-1').set({ 'x-admin': 'ops:admin' }).expect(204);
    const res = await request(url).get(`/admin/audit?from=${TODAY}&to=${TODAY}`);
    expect([res.status, res.body]).toEqual([503, JSON.parse(errors.databaseUnavailable().renderBody())]);
  });
});

describe('AuditTrail', () => {
  it('logs an entry it gives up (the database away until close), without a role it was not given', async () => {
    const handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: silentLogger });
    const lines: string[] = [];
    const trail = new AuditTrail(handle, createLogger('error', { write: (line: string) => lines.push(line) }), () => undefined);
    trail.record('', 'config.reload', 'config', 'ok', 'sighup-1');
    await trail.close(Date.now());
    expect(lines.map((line) => JSON.parse(line) as Record<string, unknown>).map(({ audit, reason, msg }) => ({ audit, reason, msg }))).toEqual([
      {
        audit: { at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), actor: '', action: 'config.reload', target: 'config', result: 'ok', requestId: 'sighup-1' },
        reason: 'closed',
        msg: 'audit entry dropped: the database was away too long',
      },
    ]);
    await handle.close();
  });
});
