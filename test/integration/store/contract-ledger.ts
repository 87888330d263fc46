import { describe, expect, it } from 'vitest';
import { BatchWriter, DatabaseUnavailableError, InvalidCursorError, isRecordRefused, type DropReason, type LedgerRow, type UsageAggregate } from '../../../src/store/index.js';
import type { ContractContext } from './durable-store.contract.js';
import { ledgerRow, rejection } from './store-fixtures.js';

const CHAT = '/v1/chat/completions';
const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const FT = 'wandb-artifact:///acme/prod/ft';

/** Rows around the month and day boundaries, with costs whose sum is exact only as integers. */
const USAGE: LedgerRow[] = [
  ledgerRow({ requestId: 'r1', at: '2025-01-31T23:59:59.999Z', keyId: 'k1', promptTokens: 100, completionTokens: 20, totalTokens: 120, costNanos: 123_456_789_012 }),
  ledgerRow({ requestId: 'r2', at: '2025-02-01T00:00:00.000Z', keyId: 'k2', model: FT, promptTokens: 50, completionTokens: 5, totalTokens: 55, costNanos: 987_654_321_098 }),
  // 01:30 at +02:00 is still January 31st in UTC.
  ledgerRow({ requestId: 'r3', at: '2025-02-01T01:30:00.000+02:00', keyId: 'k1', route: '/v1/models', method: 'GET', promptTokens: 0, completionTokens: 0, totalTokens: 0, costNanos: 0 }),
  ledgerRow({ requestId: 'r4', at: '2025-02-15T12:00:00.000Z', project: 'dev', keyId: 'k1', promptTokens: 10, completionTokens: 10, totalTokens: 20, costNanos: 1 }),
  ledgerRow({ requestId: 'r5', at: '2025-02-28T23:59:59.999Z', team: 'team-B', keyId: 'k3', promptTokens: 7, completionTokens: 3, totalTokens: 10, costNanos: 9_007_199_254 }),
  ledgerRow({ requestId: 'r6', at: '2025-03-01T00:00:00.000Z', keyId: 'k1', promptTokens: 1000, completionTokens: 1000, totalTokens: 2000, costNanos: 5 }),
];

const sums = (requests: number, promptTokens: number, completionTokens: number, totalTokens: number, costNanos: number) => ({
  requests,
  promptTokens,
  completionTokens,
  totalTokens,
  costNanos,
});

const FEBRUARY = { from: '2025-01-31', to: '2025-02-28' };

/** 2,500 rows, three to an instant (the keyset must break ties by requestId), inserted out of order. */
function manyRows(): LedgerRow[] {
  const base = Date.parse('2025-05-01T00:00:00.000Z');
  const rows = Array.from({ length: 2500 }, (_, i) =>
    ledgerRow({ requestId: `req-${String((i * 7919) % 2500).padStart(4, '0')}`, at: new Date(base + Math.floor(i / 3) * 1000).toISOString(), team: i % 2 ? 'team-a' : 'team-b' }),
  );
  return rows.reverse();
}

/** 3,000 CJK characters in no pattern: ~9 kB of UTF-8 that does not compress, past PostgreSQL's ~2.7 kB for an index entry. */
const HUGE_MODEL = Array.from({ length: 3000 }, (_, i) => String.fromCharCode(0x4e00 + ((i * 7919 + i * i * 31) % 20000))).join('');

const timeOrder = (a: LedgerRow, b: LedgerRow): number => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.requestId < b.requestId ? -1 : a.requestId > b.requestId ? 1 : 0);

export function describeLedgerContract({ store }: ContractContext): void {
  describe('usage ledger', () => {
    const insertInBatches = async (rows: LedgerRow[], size = 1000): Promise<void> => {
      for (let i = 0; i < rows.length; i += size) await store().insertLedgerRows(rows.slice(i, i + size));
    };

    it('stores every field as given and answers it back', async () => {
      const row = ledgerRow({ estimated: true, requestBytes: 3_000_000_000, costNanos: 4_503_599_627_370_496, status: 499, durationMs: 120_000, requestedModel: 'fast', fallbackFrom: 'openai/gpt-5' });
      expect(await store().insertLedgerRows([row])).toBe(1);
      expect((await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10 })).rows).toEqual([row]);
    });

    it('inserts a row once: a repeated or overlapping batch counts only new rows', async () => {
      const batch = [ledgerRow({ requestId: 'a' }), ledgerRow({ requestId: 'b' }), ledgerRow({ requestId: 'c' })];
      expect(await store().insertLedgerRows(batch)).toBe(3);
      expect(await store().insertLedgerRows(batch)).toBe(0);
      expect(await store().insertLedgerRows([batch[0]!, ledgerRow({ requestId: 'd', costNanos: 1 })])).toBe(1);
      expect(await store().insertLedgerRows([])).toBe(0);
      expect(await store().aggregateUsage({ from: '2025-01-15', to: '2025-01-15' })).toEqual([
        { team: 'team-a', project: 'prod', ...sums(4, 400, 80, 480, 3 * 9_400 + 1) },
      ]);
    });

    // SPEC 14.1 changed: repeats of an x-request-id keep it as their request_id (no more `<id>#2`, `#3`, …);
    // rows are told apart, and retried batches recognised, by the id the gateway made for each.
    it('records every request of a client that reuses its x-request-id under that id, and still writes a retried batch once', async () => {
      const first = ledgerRow({ id: 'row-1', requestId: 'same', at: '2025-01-15T12:00:00.000Z', costNanos: 1 });
      const second = ledgerRow({ id: 'row-2', requestId: 'same', at: '2025-01-15T12:00:01.000Z', costNanos: 2 });
      const third = ledgerRow({ id: 'row-3', requestId: 'same', at: '2025-01-15T12:00:02.000Z', costNanos: 4 });
      expect(await store().insertLedgerRows([first, second])).toBe(2);
      expect(await store().insertLedgerRows([first, second, third])).toBe(1);
      expect(await store().insertLedgerRows([third, second, first])).toBe(0);
      const page = await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10 });
      expect(page.rows.map((row) => [row.id, row.requestId, row.costNanos])).toEqual([
        ['row-1', 'same', 1],
        ['row-2', 'same', 2],
        ['row-3', 'same', 4],
      ]);
    });

    it('keeps identical requests of the same millisecond as rows of their own, and writes their retried batch once', async () => {
      const twins = ['b', 'c', 'a'].map((id) => ledgerRow({ id, requestId: 'same' }));
      expect(await store().insertLedgerRows(twins)).toBe(3);
      expect(await store().insertLedgerRows([...twins].reverse())).toBe(0);
      const page = await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10 });
      expect(page.rows).toEqual([twins[2], twins[0], twins[1]]);
      expect(await store().aggregateUsage({ from: '2025-01-15', to: '2025-01-15' })).toEqual([{ team: 'team-a', project: 'prod', ...sums(3, 300, 60, 360, 3 * 9_400) }]);
    });

    it('writes a request under its own x-request-id whatever ids were taken before (X, X#2 … X#1000)', async () => {
      const seeded = Array.from({ length: 1000 }, (_, i) => ledgerRow({ id: `seed-${String(i).padStart(4, '0')}`, requestId: i === 0 ? 'X' : `X#${i + 1}` }));
      expect(await store().insertLedgerRows(seeded)).toBe(1000);
      const late = ledgerRow({ id: 'late', requestId: 'X', at: '2025-01-15T13:00:00.000Z', costNanos: 7 });
      expect(await store().insertLedgerRows([late])).toBe(1);
      const first = await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 1000 });
      const second = await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 1000, after: first.lastId! });
      expect([first.rows.length, first.hasMore]).toEqual([1000, true]);
      expect(second.rows).toEqual([late]);
      expect(second.hasMore).toBe(false);
    });

    it('pages 2,500 rows that share 5 request ids, three to an instant: each row once, in (at, id) order', async () => {
      const base = Date.parse('2025-06-01T00:00:00.000Z');
      const rows = Array.from({ length: 2500 }, (_, i) =>
        ledgerRow({ id: `id-${String((i * 7919) % 2500).padStart(4, '0')}`, requestId: `shared-${i % 5}`, at: new Date(base + Math.floor(i / 3) * 1000).toISOString() }),
      ).reverse();
      await insertInBatches(rows, 500);
      const seen: LedgerRow[] = [];
      for (let after: string | undefined; ; ) {
        const page = await store().pageLedger({ from: '2025-06-01', to: '2025-06-01', limit: 333, ...(after ? { after } : {}) });
        seen.push(...page.rows);
        if (!page.hasMore) break;
        after = page.lastId!;
      }
      const byRowId = (a: LedgerRow, b: LedgerRow): number => (a.at < b.at ? -1 : a.at > b.at ? 1 : a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
      expect(seen).toEqual([...rows].sort(byRowId));
    });

    it('deletes by retention only rows older than the instant, whatever request ids newer rows share with them', async () => {
      await store().insertLedgerRows([
        ledgerRow({ id: 'old', requestId: 'shared', at: '2025-01-01T00:00:00.000Z' }),
        ledgerRow({ id: 'new', requestId: 'shared', at: '2025-03-01T00:00:00.000Z' }),
      ]);
      expect(await store().deleteLedgerBefore('2025-02-01T00:00:00.000Z')).toBe(1);
      expect((await store().pageLedger({ from: '2025-01-01', to: '2025-12-31', limit: 10 })).rows.map((row) => row.id)).toEqual(['new']);
    });

    it('keeps the daily sums equal to the rows: a retried batch adds nothing, retention (mid-day) takes its rows away', async () => {
      const day = (at: string, i: number) => ledgerRow({ id: `d-${i}`, requestId: `d-${i}`, at, costNanos: 10 + i, totalTokens: 100 });
      const rows = [day('2025-04-01T06:00:00.000Z', 1), day('2025-04-01T18:00:00.000Z', 2), day('2025-04-02T01:00:00.000Z', 3)];
      expect(await store().insertLedgerRows(rows)).toBe(3);
      expect(await store().insertLedgerRows(rows.slice(1))).toBe(0);
      const april = { from: '2025-04-01', to: '2025-04-30', groupBy: 'day' as const };
      const cell = (d: string, requests: number, cost: number) => ({ team: 'team-a', project: 'prod', day: d, ...sums(requests, 100 * requests, 20 * requests, 100 * requests, cost) });
      expect(await store().aggregateUsage(april)).toEqual([cell('2025-04-01', 2, 23), cell('2025-04-02', 1, 13)]);
      expect(await store().deleteLedgerBefore('2025-04-01T12:00:00.000Z')).toBe(1);
      expect(await store().aggregateUsage(april)).toEqual([cell('2025-04-01', 1, 12), cell('2025-04-02', 1, 13)]);
      expect(await store().deleteLedgerBefore('2025-04-02T00:00:00.000Z')).toBe(1);
      expect(await store().aggregateUsage(april)).toEqual([cell('2025-04-02', 1, 13)]);
    });

    it('keeps the daily sums equal to the rows for a batch of cells filling two statements (500 each)', async () => {
      const cells = 1000;
      const rows = Array.from({ length: cells }, (_, i) => ledgerRow({ id: `c-${i}`, requestId: `c-${i}`, keyId: `key-${i}`, costNanos: 1, totalTokens: 3 }));
      expect(await store().insertLedgerRows(rows)).toBe(cells);
      const [total] = await store().aggregateUsage({ from: '2025-01-15', to: '2025-01-15', groupBy: 'day' });
      expect(total).toEqual({ team: 'team-a', project: 'prod', day: '2025-01-15', ...sums(cells, 100 * cells, 20 * cells, 3 * cells, cells) });
    });

    it('refuses a non-integer cost (sums must stay exact)', async () => {
      expect(await rejection(store().insertLedgerRows([ledgerRow({ costNanos: 1.5 })]))).toBeInstanceOf(RangeError);
    });

    it('names the field that is not an integer', async () => {
      for (const [field, message] of [
        ['requestBytes', 'ledger requestBytes must be an integer, got 1.5'],
        ['durationMs', 'ledger durationMs must be an integer, got 1.5'],
        ['totalTokens', 'ledger totalTokens must be an integer, got 1.5'],
      ] as const) {
        const refused = await rejection(store().insertLedgerRows([ledgerRow({ [field]: 1.5 })]));
        expect([refused.constructor, refused.message]).toEqual([RangeError, message]);
      }
      expect(await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10 })).toEqual({ rows: [], hasMore: false, lastId: null });
    });

    it('pages one project, or one key, of a team: the other rows are left out', async () => {
      await store().insertLedgerRows([
        ledgerRow({ requestId: 'p1', at: '2025-01-15T10:00:00.000Z', project: 'prod', keyId: 'k1' }),
        ledgerRow({ requestId: 'p2', at: '2025-01-15T10:01:00.000Z', project: 'dev', keyId: 'k1' }),
        ledgerRow({ requestId: 'p3', at: '2025-01-15T10:02:00.000Z', project: 'prod', keyId: 'k2' }),
      ]);
      const ids = async (filter: { project?: string; key?: string }) =>
        (await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', team: 'team-a', limit: 10, ...filter })).rows.map((r) => r.requestId);
      expect(await ids({ project: 'prod' })).toEqual(['p1', 'p3']);
      expect(await ids({ key: 'k1' })).toEqual(['p1', 'p2']);
      expect(await ids({ project: 'prod', key: 'k2' })).toEqual(['p3']);
    });

    it('says a page of exactly the limit has no more, and one short of the rows has more', async () => {
      await store().insertLedgerRows([1, 2, 3].map((n) => ledgerRow({ requestId: `r${n}`, at: `2025-01-15T10:0${n}:00.000Z` })));
      const page = (limit: number) => store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit });
      expect((await page(3)).hasMore).toBe(false);
      expect((await page(2)).hasMore).toBe(true);
    });

    it('sums per team and project over inclusive UTC days, in code-unit order', async () => {
      await store().insertLedgerRows(USAGE);
      expect(await store().aggregateUsage(FEBRUARY)).toEqual([
        { team: 'team-B', project: 'prod', ...sums(1, 7, 3, 10, 9_007_199_254) },
        { team: 'team-a', project: 'dev', ...sums(1, 10, 10, 20, 1) },
        { team: 'team-a', project: 'prod', ...sums(3, 150, 25, 175, 1_111_111_110_110) },
      ]);
      expect(await store().aggregateUsage({ from: '2025-03-01', to: '2025-03-31' })).toEqual([{ team: 'team-a', project: 'prod', ...sums(1, 1000, 1000, 2000, 5) }]);
      expect(await store().aggregateUsage({ from: '2025-04-01', to: '2025-04-30' })).toEqual([]);
    });

    it.each<[string, UsageAggregate[]]>([
      ['model', [
        { team: 'team-a', project: 'prod', model: QWEN, ...sums(2, 100, 20, 120, 123_456_789_012) },
        { team: 'team-a', project: 'prod', model: FT, ...sums(1, 50, 5, 55, 987_654_321_098) },
      ]],
      ['key', [
        { team: 'team-a', project: 'prod', key: 'k1', ...sums(2, 100, 20, 120, 123_456_789_012) },
        { team: 'team-a', project: 'prod', key: 'k2', ...sums(1, 50, 5, 55, 987_654_321_098) },
      ]],
      ['day', [
        { team: 'team-a', project: 'prod', day: '2025-01-31', ...sums(2, 100, 20, 120, 123_456_789_012) },
        { team: 'team-a', project: 'prod', day: '2025-02-01', ...sums(1, 50, 5, 55, 987_654_321_098) },
      ]],
      ['month', [
        { team: 'team-a', project: 'prod', month: '2025-01', ...sums(2, 100, 20, 120, 123_456_789_012) },
        { team: 'team-a', project: 'prod', month: '2025-02', ...sums(1, 50, 5, 55, 987_654_321_098) },
      ]],
      ['route', [
        { team: 'team-a', project: 'prod', route: 'GET /v1/models', ...sums(1, 0, 0, 0, 0) },
        { team: 'team-a', project: 'prod', route: `POST ${CHAT}`, ...sums(2, 150, 25, 175, 1_111_111_110_110) },
      ]],
    ])('groups by %s (UTC days and months)', async (groupBy, expected) => {
      await store().insertLedgerRows(USAGE);
      const answer = await store().aggregateUsage({ ...FEBRUARY, team: 'team-a', project: 'prod', groupBy: groupBy as 'model' });
      expect(answer).toEqual(expected);
    });

    it('filters aggregates by key, and sorts the group dimension within each team and project', async () => {
      await store().insertLedgerRows(USAGE);
      expect(await store().aggregateUsage({ ...FEBRUARY, key: 'k1', groupBy: 'day' })).toEqual([
        { team: 'team-a', project: 'dev', day: '2025-02-15', ...sums(1, 10, 10, 20, 1) },
        { team: 'team-a', project: 'prod', day: '2025-01-31', ...sums(2, 100, 20, 120, 123_456_789_012) },
      ]);
      expect((await store().aggregateUsage({ from: '2025-01-01', to: '2025-03-31', groupBy: 'month' })).map((a) => `${a.team}/${a.project} ${a.month}`)).toEqual([
        'team-B/prod 2025-02',
        'team-a/dev 2025-02',
        'team-a/prod 2025-01',
        'team-a/prod 2025-02',
        'team-a/prod 2025-03',
      ]);
    });

    it('pages through 2,500 rows 1,000 at a time: each row once, in time order', async () => {
      const rows = manyRows();
      await insertInBatches(rows, 500);
      await store().insertLedgerRows([ledgerRow({ requestId: 'outside', at: '2025-05-02T00:00:00.000Z' })]);
      const seen: LedgerRow[] = [];
      const pages: Array<[number, boolean]> = [];
      let after: string | undefined;
      for (;;) {
        const page = await store().pageLedger({ from: '2025-05-01', to: '2025-05-01', limit: 1000, ...(after ? { after } : {}) });
        pages.push([page.rows.length, page.hasMore]);
        seen.push(...page.rows);
        if (!page.hasMore) break;
        after = page.lastId!;
      }
      expect(pages).toEqual([[1000, true], [1000, true], [500, false]]);
      expect(seen).toEqual([...rows].sort(timeOrder));
    });

    it('pages one team by keyset, and answers an empty last page with no cursor', async () => {
      await insertInBatches(manyRows());
      const teamA = manyRows().filter((r) => r.team === 'team-a').sort(timeOrder);
      const first = await store().pageLedger({ from: '2025-05-01', to: '2025-05-01', team: 'team-a', project: 'prod', key: 'key-1', limit: 1000 });
      const second = await store().pageLedger({ from: '2025-05-01', to: '2025-05-01', team: 'team-a', limit: 1000, after: first.lastId! });
      expect([first.hasMore, second.hasMore, second.rows.length]).toEqual([true, false, 250]);
      expect([...first.rows, ...second.rows]).toEqual(teamA);
      const empty = await store().pageLedger({ from: '2025-05-02', to: '2025-05-03', limit: 1 });
      expect(empty).toEqual({ rows: [], hasMore: false, lastId: null });
    });

    it('refuses a foreign cursor and a limit outside 1..1000', async () => {
      const page = { from: '2025-05-01', to: '2025-05-01' };
      expect(await rejection(store().pageLedger({ ...page, limit: 10, after: 'bm90LWEtY3Vyc29y' }))).toBeInstanceOf(InvalidCursorError);
      for (const limit of [0, 1001, 2.5]) {
        const refused = await rejection(store().pageLedger({ ...page, limit }));
        expect([refused.constructor, refused.message]).toEqual([RangeError, `limit must be 1..1000, got ${limit}`]);
      }
    });

    it('deletes rows older than the retention instant, chunk after chunk', async () => {
      const old = Array.from({ length: 12_345 }, (_, i) => ledgerRow({ requestId: `old-${i}`, at: new Date(Date.parse('2024-12-01T00:00:00.000Z') + i * 1000).toISOString() }));
      await insertInBatches(old);
      await store().insertLedgerRows(USAGE);
      expect(await store().deleteLedgerBefore('2025-02-01T00:00:00.000Z')).toBe(12_345 + 2);
      expect(await store().deleteLedgerBefore('2025-02-01T00:00:00.000Z')).toBe(0);
      const left = await store().pageLedger({ from: '2024-01-01', to: '2025-12-31', limit: 100 });
      expect(left.rows.map((r) => r.requestId)).toEqual(['r2', 'r4', 'r5', 'r6']);
    });

    it('stores a row, or refuses it as the row\'s fault (isRecordRefused), never as the database being away', async () => {
      const rows = [
        ledgerRow({ requestId: 'half-token', totalTokens: 1.5 }),
        ledgerRow({ requestId: 'nul', model: 'qw\u0000en' }),
        ledgerRow({ requestId: 'huge', model: HUGE_MODEL }),
      ];
      for (const row of rows) {
        const outcome = await store().insertLedgerRows([row]).then(
          () => 'stored',
          (err: unknown) => (isRecordRefused(err) && !(err instanceof DatabaseUnavailableError) ? 'refused' : `failed otherwise: ${String(err)}`),
        );
        // SQLite stores a NUL and long text; PostgreSQL refuses both (text cannot hold NUL; an index entry is bounded).
        const expected = row.requestId === 'half-token' || store().dialect === 'postgres' ? 'refused' : 'stored';
        expect([row.requestId, outcome]).toEqual([row.requestId, expected]);
      }
    });

    it('loses only the row it refuses when written through a BatchWriter: the rows batched with it are stored', async () => {
      const dropped: Array<[string, DropReason]> = [];
      const writer = new BatchWriter<LedgerRow>({
        write: (batch) => store().insertLedgerRows(batch),
        refused: isRecordRefused,
        onDropped: (row, reason) => dropped.push([row.requestId, reason]),
        onWriteError: () => {},
      });
      for (const requestId of ['before', 'poison', 'after']) writer.add(ledgerRow({ requestId, ...(requestId === 'poison' ? { costNanos: 0.5 } : {}) }));
      await writer.close(Date.now() + 5_000);
      expect(dropped).toEqual([['poison', 'refused']]);
      const stored = await store().pageLedger({ from: '2025-01-15', to: '2025-01-15', limit: 10 });
      expect(stored.rows.map((r) => r.requestId).sort()).toEqual(['after', 'before']);
      expect(await store().aggregateUsage({ from: '2025-01-15', to: '2025-01-15' })).toMatchObject([{ requests: 2 }]);
    });
  });
}
