import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { getPriority } from 'node:os';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXPORT_WORKER_NICE_STEPS, ExportWorker, exportBody } from '../../../src/outbox/index.js';
import { openDurableStore, type DurableStore, type LedgerRow } from '../../../src/store/index.js';
import { ledgerRow } from '../store/store-fixtures.js';

// The export worker builds SQLite's batches off the event loop from the file's columns; what it
// sends must be byte for byte what the event loop would have built from the same rows.

const dir = mkdtempSync(join(tmpdir(), 'tollgate-export-worker-'));
const SOURCE = '/tollgate';

/** Rows touching every member of the view: nulls and values, both booleans, costs from 0 to 10^6 currency units. */
const ROWS: LedgerRow[] = [
  ledgerRow({ id: 'r-0', requestId: 'q-0', costNanos: 0 }),
  ledgerRow({ id: 'r-1', requestId: 'q-1', costNanos: 1, estimated: true, traceId: '4bf92f3577b34da6a3ce929d0e0e4736' }),
  ledgerRow({ id: 'r-2', requestId: 'q-2', costNanos: 999_999_999, requestedModel: 'fast', fallbackFrom: 'OpenPipe/Qwen3-14B-Instruct', model: 'meta-llama/Llama-3-8B' }),
  ledgerRow({ id: 'r-3', requestId: 'q-3', costNanos: 123_456_789_012_345, team: 'team-b', project: 'émoji-☃', status: 429 }),
  ledgerRow({ id: 'r-4', requestId: 'q-4', costNanos: 9_400, at: '2025-01-15T12:00:01.250Z', route: '/v1/preview/training-jobs', method: 'GET', model: '' }),
];

let store: DurableStore;
let worker: ExportWorker;
const failures: string[] = [];
beforeAll(async () => {
  store = await openDurableStore({ url: '', path: join(dir, 'ledger.db') });
  await store.insertLedgerRows(ROWS);
  worker = new ExportWorker(store.outbox.ledgerFile()!, SOURCE, (reason) => failures.push(reason));
});
afterAll(async () => {
  await worker?.close();
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The nice value of each thread of this process (Linux: field 19 of /proc/self/task/<tid>/stat). */
function threadNiceValues(): number[] {
  return readdirSync('/proc/self/task').map((tid) => {
    const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[16]);
  });
}

describe('the export worker (SQLite)', () => {
  it('answers the batch the event loop would build from the same rows, byte for byte', async () => {
    const rows = await store.outbox.ledgerAfter(null, new Date().toISOString(), 100);
    expect(rows.map((row) => row.id)).toEqual(ROWS.map((row) => row.id));
    const batch = await worker.batchAfter(0, 100);
    expect(batch).toEqual({ body: exportBody(rows, SOURCE), count: 5, first: { id: 'r-0', at: ROWS[0]!.at }, last: { id: 'r-4', at: '2025-01-15T12:00:01.250Z' } });
    expect(failures).toEqual([]);
  });

  it('pages by rowid past the cursor, and answers null once nothing is left', async () => {
    const rows = await store.outbox.ledgerAfter(null, new Date().toISOString(), 100);
    expect((await worker.batchAfter(2, 2))?.body).toBe(exportBody(rows.slice(2, 4), SOURCE));
    expect((await worker.batchAfter(4, 2))?.count).toBe(1);
    expect(await worker.batchAfter(5, 2)).toBeNull();
  });

  it('sees rows committed after it opened the file', async () => {
    await store.insertLedgerRows([ledgerRow({ id: 'r-5', requestId: 'q-5' })]);
    expect(await worker.batchAfter(5, 10)).toMatchObject({ count: 1, first: { id: 'r-5' }, last: { id: 'r-5' } });
  });

  it.runIf(process.platform === 'linux')('runs at a lower priority than the threads answering requests', async () => {
    const lowered = Math.min(19, getPriority() + EXPORT_WORKER_NICE_STEPS);
    const before = threadNiceValues().filter((nice) => nice === lowered).length;
    const another = new ExportWorker(store.outbox.ledgerFile()!, SOURCE, (reason) => failures.push(reason));
    await another.batchAfter(0, 1);
    expect(threadNiceValues().filter((nice) => nice === lowered).length).toBe(before + 1);
    await another.close();
  });

  it('reports a file it cannot open as a failure: it is no longer usable, and a batch asked of it is refused', async () => {
    const reasons: string[] = [];
    const broken = new ExportWorker({ ...store.outbox.ledgerFile()!, path: join(dir, 'missing', 'ledger.db') }, SOURCE, (reason) => reasons.push(reason));
    await expect(broken.batchAfter(0, 10)).rejects.toThrow(/unable to open|directory does not exist|no such file/i);
    expect(broken.usable).toBe(false);
    expect(reasons).toHaveLength(1);
    await broken.close();
  });
});
