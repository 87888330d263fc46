import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_WORKER_NICE_STEPS, ExportWorker, exportBody } from '../../../src/outbox/index.js';
import { openDurableStore, type DurableStore, type LedgerMark, type LedgerRow } from '../../../src/store/index.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { ledgerRow } from '../store/store-fixtures.js';

// The export worker builds batches off the event loop from a connection of its own; what it sends
// must be byte for byte what the event loop would have built from the same rows, on both dialects.

const SOURCE = '/tollgate';

/** Rows touching every member of the view: nulls and values, both booleans, costs from 0 to 10^6 currency units. */
const ROWS: LedgerRow[] = [
  ledgerRow({ id: 'r-0', requestId: 'q-0', costNanos: 0 }),
  ledgerRow({ id: 'r-1', requestId: 'q-1', costNanos: 1, estimated: true, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }),
  ledgerRow({ id: 'r-2', requestId: 'q-2', costNanos: 999_999_999, requestedModel: 'fast', fallbackFrom: 'OpenPipe/Qwen3-14B-Instruct', model: 'meta-llama/Llama-3-8B' }),
  ledgerRow({ id: 'r-3', requestId: 'q-3', costNanos: 123_456_789_012_345, team: 'team-b', project: 'émoji-☃', status: 429, requestBytes: 9_007_199_254 }),
  ledgerRow({ id: 'r-4', requestId: 'q-4', costNanos: 9_400, at: '2025-01-15T12:00:01.250Z', route: '/v1/preview/training-jobs', method: 'GET', model: '' }),
];

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

interface Ledger {
  readonly store: DurableStore;
  close(): Promise<void>;
}

const DIALECTS: ReadonlyArray<readonly [string, () => Promise<Ledger>]> = [
  ['SQLite', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tollgate-export-worker-'));
    const store = await openDurableStore({ url: '', path: join(dir, 'ledger.db') });
    return { store, close: async () => { await store.close(); rmSync(dir, { recursive: true, force: true }); } };
  }],
  ['PostgreSQL', async () => {
    const database: TestDatabase = await createTestDatabase();
    const store = await openDurableStore({ url: database.url, path: '' });
    return { store, close: async () => { await store.close(); await database.drop(); } };
  }],
];

describe.each(DIALECTS)('the export worker (%s)', (_name, openLedger) => {
  let ledger: Ledger;
  let worker: ExportWorker;
  const failures: string[] = [];
  /** Rows written before this are read (PostgreSQL's settle bound): a minute from now, so every row. */
  const before = (): string => new Date(Date.now() + 60_000).toISOString();
  /** The export cursor just past row `id`, as the deliverer's commit saves it. */
  async function cursorPast(id: string): Promise<LedgerMark | null> {
    const at = new Date().toISOString();
    const delivery = { id: `probe:${id}`, sink: 'probe', eventId: id, type: 'usage.export', team: null, payload: {}, createdAt: at };
    await ledger.store.outbox.commitExport('probe', { at: '', id }, delivery, { state: 'delivered', attempts: 1, nextAt: at, at, status: 200, error: null });
    return ledger.store.outbox.exportCursor('probe');
  }

  beforeAll(async () => {
    ledger = await openLedger();
    await ledger.store.insertLedgerRows(ROWS);
    worker = new ExportWorker(ledger.store.outbox.ledgerFile()!, SOURCE, (reason) => failures.push(reason));
  });
  afterAll(async () => {
    await worker?.close();
    await ledger?.close();
  });

  it('answers the batch the event loop would build from the same rows, byte for byte', async () => {
    const rows = await ledger.store.outbox.ledgerAfter(null, before(), 100);
    expect(rows.map((row) => row.id)).toEqual(ROWS.map((row) => row.id));
    const batch = await worker.batchAfter(null, before(), 100);
    expect(batch).toEqual({ body: exportBody(rows, SOURCE), count: 5, first: { id: 'r-0', at: ROWS[0]!.at }, last: { id: 'r-4', at: '2025-01-15T12:00:01.250Z' } });
    expect(failures).toEqual([]);
  });

  it('pages past the cursor as the event loop does, and answers null once nothing is left', async () => {
    const cursor = await cursorPast('r-1');
    const rows = await ledger.store.outbox.ledgerAfter(cursor, before(), 2);
    expect(rows.map((row) => row.id)).toEqual(['r-2', 'r-3']);
    expect((await worker.batchAfter(cursor, before(), 2))?.body).toBe(exportBody(rows, SOURCE));
    expect((await worker.batchAfter(await cursorPast('r-3'), before(), 2))?.count).toBe(1);
    expect(await worker.batchAfter(await cursorPast('r-4'), before(), 2)).toBeNull();
  });

  it('sees rows committed after it connected', async () => {
    await ledger.store.insertLedgerRows([ledgerRow({ id: 'r-5', requestId: 'q-5' })]);
    expect(await worker.batchAfter(await cursorPast('r-4'), before(), 10)).toMatchObject({ count: 1, first: { id: 'r-5' }, last: { id: 'r-5' } });
  });

  it.runIf(process.platform === 'linux')('runs at a lower priority than the threads answering requests', async () => {
    const lowered = Math.min(19, getPriority() + EXPORT_WORKER_NICE_STEPS);
    const before = threadNiceValues().filter((nice) => nice === lowered).length;
    const another = new ExportWorker(ledger.store.outbox.ledgerFile()!, SOURCE, (reason) => failures.push(reason));
    await another.batchAfter(null, new Date().toISOString(), 1);
    expect(threadNiceValues().filter((nice) => nice === lowered).length).toBe(before + 1);
    await another.close();
  });
});

describe('the export worker on a SQLite file it cannot open', () => {
  it('reports the failure: it is no longer usable, and a batch asked of it is refused', async () => {
    const reasons: string[] = [];
    const broken = new ExportWorker(
      { dialect: 'sqlite', path: join(tmpdir(), 'tollgate-missing', 'ledger.db'), select: 'select 1', fields: ['id'], busyTimeoutMs: 100 },
      SOURCE,
      (reason) => reasons.push(reason),
    );
    await expect(broken.batchAfter(null, new Date().toISOString(), 10)).rejects.toThrow(/unable to open|directory does not exist|no such file/i);
    expect(broken.usable).toBe(false);
    expect(reasons).toHaveLength(1);
    await broken.close();
  });
});
