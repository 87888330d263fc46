import { describe, expect, it } from 'vitest';
import type { LedgerRow } from '../../../src/store/index.js';
import type { ContractContext } from './durable-store.contract.js';
import { ledgerRow } from './store-fixtures.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';
const LLAMA = 'meta-llama/Llama-3.1-8B';

/** Two teams over two days, two projects and two models of team-a, and answers of every kind in one hour. */
const ROWS: LedgerRow[] = [
  ledgerRow({ requestId: 'a1', at: '2025-03-01T10:00:00.000Z', team: 'team-a', project: 'prod', model: QWEN, totalTokens: 100, costNanos: 1_000 }),
  ledgerRow({ requestId: 'a2', at: '2025-03-01T10:05:00.000Z', team: 'team-a', project: 'prod', model: QWEN, totalTokens: 50, costNanos: 500, status: 429 }),
  ledgerRow({ requestId: 'a3', at: '2025-03-01T10:10:00.000Z', team: 'team-a', project: 'dev', model: LLAMA, totalTokens: 7, costNanos: 70, status: 502 }),
  ledgerRow({ requestId: 'a4', at: '2025-03-02T09:00:00.000Z', team: 'team-a', project: 'prod', model: QWEN, totalTokens: 10, costNanos: 100 }),
  ledgerRow({ requestId: 'b1', at: '2025-03-01T10:20:00.000Z', team: 'team-b', project: 'prod', model: QWEN, totalTokens: 1, costNanos: 3, status: 503 }),
  ledgerRow({ requestId: 'b2', at: '2025-03-02T11:00:00.000Z', team: 'team-b', project: 'prod', model: QWEN, totalTokens: 2, costNanos: 4 }),
];

type Cell = { day: string; team: string; project: string; model: string; requests: number; totalTokens: number; costNanos: number };

/** The cells added up per key and sorted: a store may answer a key once per slice of days (SQLite: a day at a time), and the overview adds them. */
function addedUp(cells: Cell[]): Cell[] {
  const sums = new Map<string, Cell>();
  for (const c of cells) {
    const key = `${c.day}|${c.team}|${c.project}|${c.model}`;
    const sum = sums.get(key);
    if (sum) {
      sum.requests += c.requests;
      sum.totalTokens += c.totalTokens;
      sum.costNanos += c.costNanos;
    } else sums.set(key, { ...c });
  }
  return [...sums.values()].sort(byKey);
}

const byKey = (a: { day: string; team: string; project: string; model: string }, b: typeof a): number =>
  `${a.day}|${a.team}|${a.project}|${a.model}`.localeCompare(`${b.day}|${b.team}|${b.project}|${b.model}`);

/** The console Overview's reads (SPEC 17): sums from the daily table, and the last hour's outcomes from the ledger. */
export function describeOverviewContract({ store }: ContractContext): void {
  describe('overview reads', () => {
    const cell = (day: string, team: string, project: string, model: string, requests: number, totalTokens: number, costNanos: number) => ({ day, team, project, model, requests, totalTokens, costNanos });

    it('sums per day and team, with project and model left empty', async () => {
      await store().insertLedgerRows(ROWS);
      const cells = await store().usageCells({ from: '2025-03-01', to: '2025-03-02', by: 'day-team' });
      expect(addedUp(cells)).toEqual([
        cell('2025-03-01', 'team-a', '', '', 3, 157, 1_570),
        cell('2025-03-01', 'team-b', '', '', 1, 1, 3),
        cell('2025-03-02', 'team-a', '', '', 1, 10, 100),
        cell('2025-03-02', 'team-b', '', '', 1, 2, 4),
      ]);
    });

    it('sums per team, project and model, with the day left empty; only the days asked for', async () => {
      await store().insertLedgerRows(ROWS);
      const cells = await store().usageCells({ from: '2025-03-01', to: '2025-03-01', by: 'team-project-model' });
      expect(addedUp(cells)).toEqual([
        cell('', 'team-a', 'dev', LLAMA, 1, 7, 70),
        cell('', 'team-a', 'prod', QWEN, 2, 150, 1_500),
        cell('', 'team-b', 'prod', QWEN, 1, 1, 3),
      ]);
    });

    it("keeps a team's sums to that team", async () => {
      await store().insertLedgerRows(ROWS);
      expect(addedUp(await store().usageCells({ from: '2025-03-01', to: '2025-03-02', team: 'team-b', by: 'day-team' }))).toEqual([
        cell('2025-03-01', 'team-b', '', '', 1, 1, 3),
        cell('2025-03-02', 'team-b', '', '', 1, 2, 4),
      ]);
      expect(addedUp(await store().usageCells({ from: '2025-03-01', to: '2025-03-02', team: 'team-b', by: 'team-project-model' }))).toEqual([cell('', 'team-b', 'prod', QWEN, 2, 3, 7)]);
    });

    it('counts the requests of [since, until) with those answered 429 and 5xx, for everyone or one team', async () => {
      await store().insertLedgerRows(ROWS);
      const hour = { since: '2025-03-01T10:00:00.000Z', until: '2025-03-01T10:20:00.000Z' };
      expect(await store().recentOutcomes(hour)).toEqual({ requests: 3, rejected429: 1, upstreamErrors: 1 });
      expect(await store().recentOutcomes({ ...hour, until: '2025-03-01T10:20:00.001Z' })).toEqual({ requests: 4, rejected429: 1, upstreamErrors: 2 });
      expect(await store().recentOutcomes({ ...hour, until: '2025-03-01T11:00:00.000Z', team: 'team-b' })).toEqual({ requests: 1, rejected429: 0, upstreamErrors: 1 });
      expect(await store().recentOutcomes({ since: '2025-03-05T00:00:00.000Z', until: '2025-03-06T00:00:00.000Z' })).toEqual({ requests: 0, rejected429: 0, upstreamErrors: 0 });
    });
  });
}
