import { DAY_MS } from '../calendar.js';
import { BatchWriter, isRecordRefused, type DropReason, type LedgerRow, type StoreHandle } from '../store/index.js';
import { LedgerJournal } from './ledger-journal.js';
import { newLedgerRowId } from './ledger-row-id.js';

/** What a request hands the ledger: a row without its id, which the ledger makes. */
export type LedgerEntry = Omit<LedgerRow, 'id'>;

/** The longest model name (and key id) a row keeps, in characters: a client chooses its model, and every request is stored. */
export const LEDGER_TEXT_MAX_CHARS = 256;

/**
 * Text a client chose (the model name; a JWT's subject as the key id) as every database can
 * store and index it: NUL, which PostgreSQL text refuses, becomes U+FFFD, and past `maxChars` the
 * text is cut (at a character boundary) and ends in `…` — so that PostgreSQL's limit on an index
 * entry (~2.7 kB; the daily sums are keyed by model and key) is never reached.
 */
export function storableText(text: string, maxChars: number): string {
  const clean = text.includes('\u0000') ? text.replaceAll('\u0000', '\ufffd') : text;
  if (clean.length <= maxChars) return clean;
  const cut = clean.charCodeAt(maxChars - 2) >= 0xd800 && clean.charCodeAt(maxChars - 2) <= 0xdbff ? maxChars - 2 : maxChars - 1;
  return `${clean.slice(0, cut)}…`;
}

export interface LedgerOptions {
  /** Whether rows are written at all (`metering.ledger.enabled`, reloadable). */
  readonly enabled: () => boolean;
  /** Rows older than this many days are deleted, once a day. */
  readonly retentionDays: () => number;
  /** Rows kept while the database is away (default 100,000). */
  readonly maxBuffered?: () => number;
  /** A row given up: the buffer was full, the ledger closed with it unwritten, or the database refused it (`cause`). */
  readonly onDropped: (row: LedgerRow, reason: DropReason, cause?: unknown) => void;
  readonly onDatabaseError: (err: unknown) => void;
  /** Cluster workers: the path prefix of this worker's journal (LedgerJournal), which its replacement reads back. */
  readonly journal?: string;
  /** The journal could not be written, read or deleted (the row still goes to the database through the buffer). */
  readonly onJournalError?: (err: unknown) => void;
}

/**
 * The usage ledger's writer (SPEC 14.1): one row per request on a limited route, written in
 * batches off the request path. Rows wait in a bounded buffer (and are retried) while the
 * database is away. Each row gets an id made here, once per request: a batch retried after a lost
 * reply is not counted twice (rows are unique by that id), while requests that share an
 * x-request-id, even identical ones, are rows of their own. Deletes rows past the retention once a day.
 */
export class Ledger {
  private readonly writer: BatchWriter<LedgerRow>;
  private readonly retention: NodeJS.Timeout;
  private readonly journal: LedgerJournal | undefined;

  constructor(
    private readonly handle: StoreHandle,
    private readonly options: LedgerOptions,
  ) {
    this.journal = options.journal === undefined ? undefined : this.guarded(() => new LedgerJournal(options.journal!));
    const journal = this.journal;
    this.writer = new BatchWriter<LedgerRow>({
      write: (batch) => handle.require().insertLedgerRows(batch),
      ...(options.maxBuffered === undefined ? {} : { maxBuffered: options.maxBuffered }),
      onDropped: options.onDropped,
      onWriteError: options.onDatabaseError,
      refused: isRecordRefused,
      ...(journal ? { checkpoints: { seal: () => this.guarded(() => journal.seal()) ?? -1, release: (mark) => this.guarded(() => journal.release(mark)) } } : {}),
    });
    for (const row of this.guarded(() => journal?.leftOver()) ?? []) this.writer.add(row);
    this.retention = setInterval(() => void this.deleteExpired(), DAY_MS);
    this.retention.unref();
  }

  /** Adds the row of one request (unless the ledger is turned off); never blocks, never throws. */
  record(entry: LedgerEntry): void {
    if (!this.options.enabled()) return;
    const row = { ...entry, model: storableText(entry.model, LEDGER_TEXT_MAX_CHARS), keyId: storableText(entry.keyId, LEDGER_TEXT_MAX_CHARS), id: newLedgerRowId() };
    if (this.journal) this.guarded(() => this.journal!.append(row));
    this.writer.add(row);
  }

  /** Rows not written yet (buffered while the database is away). */
  get pending(): number {
    return this.writer.pending;
  }

  /** Writes what is buffered, until `deadline` (epoch ms). */
  flush(deadline?: number): Promise<void> {
    return this.writer.flush(deadline);
  }

  /** A last flush until `deadline`; what is still unwritten then is dropped (and reported). */
  async close(deadline: number): Promise<void> {
    clearInterval(this.retention);
    await this.writer.flush(deadline);
    const written = this.writer.pending === 0;
    await this.writer.close(deadline);
    // Rows still unwritten stay journaled: the next process on this journal writes them.
    this.guarded(() => this.journal?.close(written));
  }

  /** Runs a journal operation; a failure is reported, never thrown onto the request path. */
  private guarded<R>(operation: () => R): R | undefined {
    try {
      return operation();
    } catch (err) {
      this.options.onJournalError?.(err);
      return undefined;
    }
  }

  /** Deletes rows older than the retention; answers how many (0 while the database is away). */
  async deleteExpired(now = Date.now()): Promise<number> {
    const store = this.handle.current;
    if (!store) return 0;
    try {
      return await store.deleteLedgerBefore(new Date(now - this.options.retentionDays() * DAY_MS).toISOString());
    } catch (err) {
      this.options.onDatabaseError(err);
      return 0;
    }
  }
}
