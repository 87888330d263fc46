import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { loadConfig } from '../../../src/config/index.js';
import { openDurableStore, type DurableStore, type LedgerRow } from '../../../src/store/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, tempDatabasePath, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { writeTempConfig } from '../../helpers/process.js';
import { ledgerRow } from '../store/store-fixtures.js';

/** SPEC 17: the console's read endpoints, their exact bodies and who sees what, on each database. */

const VIEWER = 'tg-test-viewer-key-cccccccccccccccccc';
const LEAD = 'tg-test-team-a-lead-dddddddddddddddd';
const MIN = 60_000;
const DAY = 86_400_000;
const NOW = Date.now();

/** The ledger the overview reads: the last hour (a 429, a 502), earlier, 10 and 40 days ago. */
const ROWS: LedgerRow[] = [
  { at: NOW - 1 * MIN, team: 'team-a', project: 'prod', model: 'm1', status: 200, totalTokens: 100, costNanos: 1_500_000_000 },
  { at: NOW - 2 * MIN, team: 'team-b', project: 'dev', model: 'm2', status: 429, totalTokens: 0, costNanos: 0 },
  { at: NOW - 3 * MIN, team: 'team-a', project: 'dev', model: 'm2', status: 502, totalTokens: 10, costNanos: 250_000_000 },
  { at: NOW - 120 * MIN, team: 'team-b', project: 'prod', model: 'm1', status: 200, totalTokens: 50, costNanos: 2_000_000_000 },
  { at: NOW - 10 * DAY, team: 'team-c', project: 'x', model: 'm3', status: 200, totalTokens: 7, costNanos: 500_000_000 },
  { at: NOW - 40 * DAY, team: 'team-a', project: 'prod', model: 'm1', status: 200, totalTokens: 1000, costNanos: 100_000_000_000 },
].map((r, i) => ledgerRow({ ...r, at: new Date(r.at).toISOString(), id: `row-${i}`, requestId: `req-${i}` }));

const today = utcDay(NOW);
const month = today.slice(0, 7);
const chartFrom = utcDay(NOW - 29 * DAY);
const nanos = (n: number): number => n / 1e9;

/** What the overview should say of `rows` (the fixture's arithmetic, written plainly). */
function expectedOverview(rows: readonly LedgerRow[]) {
  const totals = (of: readonly LedgerRow[]) => ({ requests: of.length, tokens: of.reduce((s, r) => s + r.totalTokens, 0), cost: nanos(of.reduce((s, r) => s + r.costNanos, 0)) });
  const inMonth = rows.filter((r) => r.at.startsWith(month));
  const sums = (of: readonly LedgerRow[], key: (r: LedgerRow) => string) => {
    const m = new Map<string, number>();
    for (const r of of) m.set(key(r), (m.get(key(r)) ?? 0) + r.costNanos);
    return m;
  };
  const ranked = (m: Map<string, number>) => [...m].sort(([an, a], [bn, b]) => b - a || an.localeCompare(bn)).slice(0, 5).map(([name, c]) => ({ name, cost: nanos(c) }));
  const perDay = sums(rows.filter((r) => r.at.slice(0, 10) >= chartFrom), (r) => `${r.at.slice(0, 10)} ${r.team}`);
  const recent = rows.filter((r) => Date.parse(r.at) >= NOW - 60 * MIN);
  return {
    currency: 'USD',
    today: totals(rows.filter((r) => r.at.startsWith(today))),
    month: totals(inMonth),
    costPerDay: [...perDay.keys()].sort().map((k) => ({ day: k.split(' ')[0], team: k.split(' ')[1], cost: nanos(perDay.get(k)!) })),
    top: { teams: ranked(sums(inMonth, (r) => r.team)), projects: ranked(sums(inMonth, (r) => `${r.team}/${r.project}`)), models: ranked(sums(inMonth, (r) => r.model)) },
    lastHour: { requests: recent.length, rejected429: recent.filter((r) => r.status === 429).length, upstreamErrors: recent.filter((r) => r.status >= 500).length },
  };
}

const yaml = (database: string, service: string, inference: string, port = 0): string => `
server: { host: 127.0.0.1, port: ${port}, shutdownGraceMs: 2000 }
upstreams: { service: { url: "${service}", timeoutMs: 2000 }, inference: { url: "${inference}", timeoutMs: 2000 } }
auth:
  keys: ${JSON.stringify(KEY_ENTRIES)}
  admin: { keys: ${JSON.stringify([
    { id: 'ops', sha256: digest(KEYS.admin) },
    { id: 'finance', sha256: digest(VIEWER), role: 'viewer' },
    { id: 'team-a-lead', sha256: digest(LEAD), role: 'team-admin', team: 'team-a' },
  ])} }
teams: [{ id: team-a }, { id: team-b }]
database: ${database}
logging: { level: silent }
`;

const DATABASES = {
  sqlite: async () => {
    const path = tempDatabasePath();
    return { yaml: `{ path: "${path}" }`, settings: { url: '', path }, drop: async () => undefined };
  },
  postgres: async () => {
    const database: TestDatabase = await createTestDatabase();
    return { yaml: `{ url: "${database.url}" }`, settings: { url: database.url, path: '' }, drop: () => database.drop() };
  },
} as const;

describe.each(Object.keys(DATABASES) as Array<keyof typeof DATABASES>)('console read endpoints on %s', (kind) => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let store: DurableStore;
  let drop: () => Promise<unknown>;
  let path: string;
  let write: (port?: number) => void;
  let startedAt: number;

  beforeAll(async () => {
    const database = await DATABASES[kind]();
    drop = database.drop;
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    path = writeTempConfig(yaml(database.yaml, service.url, inference.url));
    write = (port) => writeFileSync(path, yaml(database.yaml, service.url, inference.url, port));
    startedAt = Date.now();
    gw = await startGateway(loadConfig(path), path);
    store = await openDurableStore(database.settings);
    expect(await store.insertLedgerRows(ROWS)).toBe(ROWS.length);
  });
  afterAll(async () => {
    await store.close();
    await gw.close();
    await Promise.all([service.close(), inference.close()]);
    await drop();
  });

  it('answers the overview: today, the month, cost per day and team, the top 5s, the last hour', async () => {
    const res = await request(gw.url).get('/admin/overview').set('authorization', bearer(KEYS.admin));
    expect(res.status).toBe(200);
    expect(res.body).toEqual(expectedOverview(ROWS));
    expect(res.body.lastHour).toEqual({ requests: 3, rejected429: 1, upstreamErrors: 1 });
    const viewer = await request(gw.url).get('/admin/overview').set('authorization', bearer(VIEWER));
    expect([viewer.status, viewer.body]).toEqual([200, res.body]);
  });

  it("gives a team-admin its team's overview only", async () => {
    const res = await request(gw.url).get('/admin/overview').set('authorization', bearer(LEAD));
    expect([res.status, res.body]).toEqual([200, expectedOverview(ROWS.filter((r) => r.team === 'team-a'))]);
    expect(res.body.lastHour).toEqual({ requests: 2, rejected429: 0, upstreamErrors: 1 });
  });

  it('refuses query parameters it does not take', async () => {
    const res = await request(gw.url).get('/admin/overview?team=team-b').set('authorization', bearer(KEYS.admin));
    expect([res.status, res.body.error]).toEqual([400, { message: 'Unknown query parameter "team"; /admin/overview takes none.', type: 'invalid_request_error', param: 'team', code: 'invalid_query' }]);
  });

  it('answers the config status: its file, when it was loaded, the last reload, restart-only changes; not to a team-admin', async () => {
    const admin = { authorization: bearer(KEYS.admin) };
    const first = await request(gw.url).get('/admin/config').set(admin);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ source: path, loadedAt: expect.any(String), lastReload: null, restartRequired: [] });
    expect(Date.parse(first.body.loadedAt)).toBeGreaterThanOrEqual(startedAt - 1);

    writeFileSync(path, 'server: [');
    const refused = await request(gw.url).post('/admin/config/reload').set(admin);
    expect(refused.status).toBe(400);
    const afterRefusal = await request(gw.url).get('/admin/config').set(admin);
    expect(afterRefusal.body).toEqual({
      source: path,
      loadedAt: first.body.loadedAt,
      lastReload: { at: expect.any(String), outcome: 'refused', error: refused.body.error.message },
      restartRequired: [],
    });

    write(65_000);
    expect((await request(gw.url).post('/admin/config/reload').set(admin)).body.restartRequired).toEqual(['server.port']);
    const applied = await request(gw.url).get('/admin/config').set(admin);
    expect(applied.body).toEqual({ source: path, loadedAt: applied.body.lastReload.at, lastReload: { at: expect.any(String), outcome: 'applied' }, restartRequired: ['server.port'] });
    expect(Date.parse(applied.body.loadedAt)).toBeGreaterThanOrEqual(Date.parse(afterRefusal.body.lastReload.at));

    expect((await request(gw.url).get('/admin/config').set('authorization', bearer(VIEWER))).body).toEqual(applied.body);
    const lead = await request(gw.url).get('/admin/config').set('authorization', bearer(LEAD));
    expect([lead.status, lead.body.error.code]).toEqual([403, 'insufficient_role']);
    write();
  });
});
