import request from 'supertest';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import { overviewHandler } from '../../../src/admin/index.js';
import { Ledger } from '../../../src/metering/index.js';
import { type DatabaseSettings, type LedgerRow, silentLogger, StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { ledgerRow } from '../../integration/store/store-fixtures.js';
import { serveHandlers } from './serve-handlers.js';

/**
 * SPEC 17 `GET /admin/overview` at fixed instants of the UTC calendar: where the 30-day chart
 * starts against the month's first day, what "today" and "the last hour" hold at their edges,
 * and the top lists' order when costs tie. Over a real SQLite store (and PostgreSQL for the
 * chart's order, below); only `Date` is faked.
 */

const HOUR = 3_600_000;

interface Overview {
  today: { requests: number; tokens: number; cost: number };
  month: { requests: number; tokens: number; cost: number };
  costPerDay: Array<{ day: string; team: string; cost: number }>;
  top: Record<'teams' | 'projects' | 'models', Array<{ name: string; cost: number }>>;
  lastHour: { requests: number; rejected429: number; upstreamErrors: number };
}

async function seedInto(handle: StoreHandle, rows: ReadonlyArray<Partial<LedgerRow> & { at: string }>): Promise<void> {
  const full = rows.map((row, i) => ledgerRow({ id: `row-${i}`, requestId: `req-${i}`, totalTokens: 10, ...row }));
  expect(await handle.require().insertLedgerRows(full)).toBe(full.length);
}

async function overviewAt(url: string, teamScope?: string): Promise<Overview> {
  const res = await request(url).get('/admin/overview').set(teamScope === undefined ? {} : { 'x-team-scope': teamScope });
  expect(res.status).toBe(200);
  return res.body as Overview;
}

/** The overview handler over a real store, the ledger it flushes before reading, and what that ledger dropped or failed to write. */
interface ServedOverview {
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  readonly url: string;
  readonly dropped: readonly string[];
  close(): Promise<void>;
}

async function serveOverview(settings: DatabaseSettings): Promise<ServedOverview> {
  const dropped: string[] = [];
  const handle = new StoreHandle(settings, { logger: silentLogger });
  expect(await handle.open()).toBe(true);
  const ledger = new Ledger(handle, { enabled: () => true, retentionDays: () => 400, onDropped: (row) => dropped.push(row.requestId), onDatabaseError: (err) => dropped.push(String(err)) });
  const server = await serveHandlers((app) => app.get('/admin/overview', overviewHandler({ handle, ledger, currency: () => 'EUR' })));
  return {
    handle,
    ledger,
    url: server.url,
    dropped,
    async close() {
      await server.close();
      await ledger.close(Date.now() + 1000);
      await handle.close();
    },
  };
}

describe('GET /admin/overview on the calendar', () => {
  let served: ServedOverview;

  beforeEach(async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    served = await serveOverview({ url: '', path: tempDatabasePath() });
  });
  afterEach(async () => {
    await served.close();
    vi.useRealTimers();
    expect(served.dropped).toEqual([]);
  });

  const seed = (rows: ReadonlyArray<Partial<LedgerRow> & { at: string }>): Promise<void> => seedInto(served.handle, rows);
  const overview = (teamScope?: string): Promise<Overview> => overviewAt(served.url, teamScope);

  const dayCost = (day: string, team: string, cost: number) => ({ day, team, cost });
  it.each([
    {
      when: "on a month's 31st: the month counts its 1st, which the 30-day chart (from the 2nd) leaves out",
      now: '2026-03-31T12:00:00.000Z',
      rows: [
        ['2026-03-01T10:00:00.000Z', 'team-x', 1],
        ['2026-03-02T00:00:00.000Z', 'team-y', 2],
        ['2026-03-30T23:59:59.999Z', 'team-y', 4],
        ['2026-03-31T00:00:00.000Z', 'team-x', 8],
      ],
      costPerDay: [dayCost('2026-03-02', 'team-y', 2), dayCost('2026-03-30', 'team-y', 4), dayCost('2026-03-31', 'team-x', 8)],
      month: { requests: 4, tokens: 40, cost: 15 },
      today: { requests: 1, tokens: 10, cost: 8 },
    },
    {
      when: "early in a month: the chart reaches into the last month (from 29 days back), the month's totals do not",
      now: '2026-03-05T12:00:00.000Z',
      rows: [
        ['2026-02-03T23:59:59.999Z', 'team-x', 1],
        ['2026-02-04T00:00:00.000Z', 'team-x', 2],
        ['2026-02-28T08:00:00.000Z', 'team-y', 4],
        ['2026-03-01T00:00:00.000Z', 'team-y', 8],
      ],
      costPerDay: [dayCost('2026-02-04', 'team-x', 2), dayCost('2026-02-28', 'team-y', 4), dayCost('2026-03-01', 'team-y', 8)],
      month: { requests: 1, tokens: 10, cost: 8 },
      today: { requests: 0, tokens: 0, cost: 0 },
    },
  ] as const)('$when', async ({ now, rows, costPerDay, month, today }) => {
    vi.setSystemTime(new Date(now));
    await seed(rows.map(([at, team, cost]) => ({ at, team, costNanos: cost * 1_000_000_000 })));
    const body = await overview();
    expect([body.costPerDay, body.month, body.today]).toEqual([costPerDay, month, today]);
  });

  it('counts a row written this very millisecond in the last hour, and one an hour old; not one older', async () => {
    vi.setSystemTime(new Date('2026-03-05T12:00:00.000Z'));
    await seed([
      { at: '2026-03-05T12:00:00.000Z', status: 429 },
      { at: '2026-03-05T11:00:00.000Z', status: 503 },
      { at: '2026-03-05T10:59:59.999Z', status: 500 },
    ]);
    expect((await overview()).lastHour).toEqual({ requests: 2, rejected429: 1, upstreamErrors: 1 });
  });

  it('reads a row the ledger was handed just before, not yet written by its own timer', async () => {
    vi.setSystemTime(new Date('2026-03-05T12:00:00.000Z'));
    const { id: _id, ...entry } = ledgerRow({ at: new Date(Date.now() - HOUR / 2).toISOString(), team: 'team-z', costNanos: 3_000_000_000 });
    served.ledger.record(entry);
    expect(served.ledger.pending).toBe(1);
    const body = await overview();
    expect([body.today, body.lastHour.requests]).toEqual([{ requests: 1, tokens: 120, cost: 3 }, 1]);
  });

  it('ranks each top list by cost, ties by name in code-unit order, five at most', async () => {
    vi.setSystemTime(new Date('2026-03-05T12:00:00.000Z'));
    // SQLite groups the month's cells by team, project, model: first-seen order is team order, not model order.
    await seed([
      { at: '2026-03-02T00:00:00.000Z', team: 'team-a', project: 'p', model: 'z-model', costNanos: 3_000_000_000 },
      { at: '2026-03-02T00:00:00.000Z', team: 'team-b', project: 'p', model: 'B-model', costNanos: 3_000_000_000 },
      { at: '2026-03-02T00:00:00.000Z', team: 'team-c', project: 'p', model: 'a-model', costNanos: 3_000_000_000 },
      { at: '2026-03-02T00:00:00.000Z', team: 'team-d', project: 'p', model: 'cheap', costNanos: 1_000_000_000 },
      { at: '2026-03-02T00:00:00.000Z', team: 'team-e', project: 'p', model: 'dear', costNanos: 9_000_000_000 },
      { at: '2026-03-02T00:00:00.000Z', team: 'team-f', project: 'p', model: 'cheapest', costNanos: 500_000_000 },
    ]);
    const { top } = await overview();
    expect(top.models).toEqual([
      { name: 'dear', cost: 9 },
      { name: 'B-model', cost: 3 },
      { name: 'a-model', cost: 3 },
      { name: 'z-model', cost: 3 },
      { name: 'cheap', cost: 1 },
    ]);
    expect(top.teams.map((t) => t.name)).toEqual(['team-e', 'team-a', 'team-b', 'team-c', 'team-d']);
    expect(top.projects.map((t) => t.name)).toEqual(['team-e/p', 'team-a/p', 'team-b/p', 'team-c/p', 'team-d/p']);
  });

  it("gives a team scope its team's numbers only", async () => {
    vi.setSystemTime(new Date('2026-03-05T12:00:00.000Z'));
    await seed([
      { at: '2026-03-05T11:30:00.000Z', team: 'team-a', status: 502, costNanos: 1_000_000_000 },
      { at: '2026-03-05T11:30:00.000Z', team: 'team-b', status: 429, costNanos: 2_000_000_000 },
    ]);
    const body = await overview('team-a');
    expect([body.today, body.costPerDay, body.top.teams, body.lastHour]).toEqual([
      { requests: 1, tokens: 10, cost: 1 },
      [{ day: '2026-03-05', team: 'team-a', cost: 1 }],
      [{ name: 'team-a', cost: 1 }],
      { requests: 1, rejected429: 0, upstreamErrors: 1 },
    ]);
  });
});

/**
 * SQLite hands the chart's day/team sums back in key order; PostgreSQL, once ledger_daily is
 * large (measured: 15,000 rows, analyzed), groups them in a hash table and hands them back in
 * its order. Here the planner is steered to that plan on a small table (no sorts, no index
 * scans): the chart must still come in day, then team order.
 */
describe('GET /admin/overview on PostgreSQL, whose grouping comes back in any order', () => {
  let database: TestDatabase;
  let served: ServedOverview;

  beforeAll(async () => {
    database = await createTestDatabase();
    // Set for the database before the store connects: every connection of its pool plans this way.
    for (const plan of ['enable_sort', 'enable_indexscan', 'enable_indexonlyscan', 'enable_bitmapscan']) await database.query(`ALTER DATABASE ${database.name} SET ${plan} = off`);
    served = await serveOverview({ url: database.url, path: '' });
  });
  afterAll(async () => {
    await served.close();
    vi.useRealTimers();
    await database.drop();
    expect(served.dropped).toEqual([]);
  });

  it('answers the cost per day and team in day, then team (code-unit) order', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2026-03-05T12:00:00.000Z'));
    const teams = ['team-b', 'Team-Z', 'team-a', 'a-z', 'ab', 'team-10', 'team-9', 'x_y', 'xy', 'm', 'n', 'B'];
    const days = ['2026-03-03', '2026-03-01', '2026-03-04'];
    await seedInto(served.handle, days.flatMap((day) => teams.map((team, i) => ({ at: `${day}T08:00:00.000Z`, team, costNanos: (i + 1) * 1_000_000_000 }))));
    // The premise: the store's own answer is not in that order (a hash aggregate's), so the order below is the overview's doing.
    const stored = (await served.handle.require().usageCells({ from: '2026-02-04', to: '2026-03-05', by: 'day-team' })).map((c) => `${c.day} ${c.team}`);
    expect(stored).not.toEqual([...stored].sort());

    const { costPerDay } = await overviewAt(served.url);
    const sortedTeams = [...teams].sort();
    expect(costPerDay).toEqual([...days].sort().flatMap((day) => sortedTeams.map((team) => ({ day, team, cost: teams.indexOf(team) + 1 }))));
  });
});
