import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import { LEDGER_VIEW } from '../metering/index.js';
import type { LedgerFile, LedgerMark } from '../store/index.js';
import { usageEnvelope } from './formats.js';

/**
 * The usage export's batches read and built off the event loop (SQLite). Reading 500 ledger rows,
 * making each a CloudEvent with the SDK and serializing the batch costs ~20 µs of CPU a row —
 * about one served request's worth of the gateway's budget for every request it serves, on the
 * thread that serves them (SPEC 24: the export must not slow /v1). This worker opens the file
 * read-only (WAL: it never waits for the writer, nor the writer for it) and answers each batch as
 * the body to send; the event loop only sends it and moves the cursor. It runs at a lower priority
 * than the threads answering requests. The view is built from
 * LEDGER_VIEW and the envelope from usageEnvelope, so its events are byte for byte exportBody's
 * (tested).
 */

/** Where a batch starts and ends: the ids and `at` of its first and last rows. */
export interface BatchEdge {
  readonly id: string;
  readonly at: string;
}

/** A batch ready to send: its body (a JSON array of CloudEvents) and the rows it carries. */
export interface ExportBatch {
  readonly body: string;
  readonly count: number;
  readonly first: BatchEdge;
  readonly last: BatchEdge;
}

/** How many nice steps below the request threads the worker runs (Linux). */
export const EXPORT_WORKER_NICE_STEPS = 10;

type WorkerReply = { readonly id: number; readonly batch?: ExportBatch | null; readonly error?: string };

// CommonJS, evaluated: no file of its own in src/ or dist/ (as the SQLite checkpointer). `amount`
// is nano-units ÷ 1e9: for the integers the ledger holds, the same double as nanosToAmount's
// decimal (both are the correctly rounded value of n × 10⁻⁹).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { CloudEvent } = require(workerData.cloudeventsModule);
const ledger = workerData.ledger;
// Background work: on Linux the thread lowers its own priority (setpriority(2) takes a thread id),
// so that on busy cores answering requests comes first; the export lags meanwhile, losing nothing.
try {
  const tid = Number(require('node:fs').readlinkSync('/proc/thread-self').split('/').pop());
  const os = require('node:os');
  if (Number.isInteger(tid) && tid > 0) os.setPriority(tid, Math.min(19, os.getPriority(tid) + workerData.niceSteps));
} catch {
  // Not Linux, or not allowed: the thread keeps the process's priority.
}
// SQLite rows start with their rowid; PostgreSQL rows are the fields only.
const offset = ledger.dialect === 'sqlite' ? 1 : 0;
const column = (field) => ledger.fields.indexOf(field) + offset;
const ID = column('id'), AT = column('at'), TEAM = column('team'), PROJECT = column('project');
const view = workerData.view.map(([name, field, kind]) => [name, column(field), kind]);
let readRows;
if (ledger.dialect === 'sqlite') {
  const Sqlite = require(workerData.sqliteModule);
  const file = new Sqlite(ledger.path, { readonly: true, fileMustExist: true, timeout: ledger.busyTimeoutMs });
  const select = file.prepare(ledger.select).raw(true);
  readRows = async (cursor, _before, limit) => select.all(cursor === null ? 0 : Number(cursor.id), limit);
} else {
  const { Client } = require(workerData.pgModule);
  let client;
  const connected = async () => {
    if (client !== undefined) return client;
    const fresh = new Client({ connectionString: ledger.url, statement_timeout: ledger.timeoutMs, connectionTimeoutMillis: ledger.timeoutMs, application_name: 'tollgate-export' });
    fresh.on('error', () => { if (client === fresh) client = undefined; });
    await fresh.connect();
    return (client = fresh);
  };
  readRows = async (cursor, before, limit) => {
    const db = await connected();
    try {
      const result = cursor === null
        ? await db.query({ text: ledger.selectFirst, values: [before, limit], rowMode: 'array' })
        : await db.query({ text: ledger.selectAfter, values: [before, cursor.at, cursor.id, limit], rowMode: 'array' });
      return result.rows;
    } catch (error) {
      // A broken connection is made again at the next batch.
      client = undefined;
      db.end().catch(() => {});
      throw error;
    }
  };
}
function dataOf(values) {
  const data = {};
  for (const [name, index, kind] of view) {
    const value = values[index];
    data[name] = kind === 'amount' ? value / 1e9 : kind === 'bool' ? Boolean(value) : value;
  }
  return data;
}
async function encode(cursor, before, limit) {
  const rows = await readRows(cursor, before, limit);
  if (rows.length === 0) return null;
  const events = rows.map((values, index) =>
    new CloudEvent({ ...workerData.envelope, id: values[ID], subject: values[TEAM] + '/' + values[PROJECT], time: values[AT], data: dataOf(values) }, index === 0));
  const first = rows[0], last = rows[rows.length - 1];
  return { body: JSON.stringify(events), count: rows.length, first: { id: first[ID], at: first[AT] }, last: { id: last[ID], at: last[AT] } };
}
parentPort.on('message', (message) => {
  if (message.stop) { parentPort.close(); process.exit(0); }
  encode(message.cursor, message.before, message.limit).then(
    (batch) => parentPort.postMessage({ id: message.id, batch }),
    (error) => parentPort.postMessage({ id: message.id, error: String((error && error.message) || error) }),
  );
});
`;

/** One worker per SQLite store: batches of its ledger past a rowid cursor, as export bodies. */
export class ExportWorker {
  private readonly worker: Worker;
  private readonly waiting = new Map<number, (reply: WorkerReply) => void>();
  private nextId = 1;
  private failure: string | undefined;

  constructor(file: LedgerFile, source: string, onFailure: (reason: string) => void) {
    const require = createRequire(import.meta.url);
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        sqliteModule: require.resolve('better-sqlite3'),
        pgModule: require.resolve('pg'),
        cloudeventsModule: require.resolve('cloudevents'),
        ledger: file,
        view: LEDGER_VIEW,
        envelope: usageEnvelope(source),
        niceSteps: EXPORT_WORKER_NICE_STEPS,
      },
    });
    // Never keeps the process alive; close() ends it for an orderly exit.
    this.worker.unref();
    this.worker.on('message', (reply: WorkerReply) => {
      const resolve = this.waiting.get(reply.id);
      this.waiting.delete(reply.id);
      resolve?.(reply);
    });
    const fail = (reason: string): void => {
      if (this.failure !== undefined) return;
      this.failure = reason;
      for (const resolve of this.waiting.values()) resolve({ id: 0, error: reason });
      this.waiting.clear();
      onFailure(reason);
    };
    this.worker.on('error', (error) => fail(error.message));
    this.worker.on('exit', (code) => fail(`the export worker exited with code ${code}`));
  }

  /** Whether it still answers (after a failure the caller builds batches itself). */
  get usable(): boolean {
    return this.failure === undefined;
  }

  /** The next batch of at most `limit` rows past `cursor` (PostgreSQL: written before `before`); null when there are none yet. */
  batchAfter(cursor: LedgerMark | null, before: string, limit: number): Promise<ExportBatch | null> {
    if (this.failure !== undefined) return Promise.reject(new Error(this.failure));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      this.waiting.set(id, (reply) => (reply.error === undefined ? resolve(reply.batch ?? null) : reject(new Error(reply.error))));
      this.worker.postMessage({ id, cursor, before, limit });
    });
  }

  async close(): Promise<void> {
    if (this.failure !== undefined) return;
    this.failure = 'closed';
    for (const resolve of this.waiting.values()) resolve({ id: 0, error: 'the export worker has closed' });
    this.waiting.clear();
    const exited = new Promise<void>((resolve) => this.worker.once('exit', () => resolve()));
    this.worker.postMessage({ stop: true });
    await exited;
  }
}
