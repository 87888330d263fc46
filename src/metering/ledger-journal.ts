import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, unlinkSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import type { LedgerRow } from '../store/index.js';

/**
 * A worker's ledger rows on disk until the database has them: each row is appended (one JSON
 * line, `writeSync`) before its response ends, so a row the batch writer still held when the
 * process was killed with -9 is in the page cache and read back by the process that takes the
 * worker's place. Files are segments `<prefix>.<n>.jsonl`: when the writer takes every buffered
 * row for a write, the open segment is sealed, and once that write commits every sealed segment
 * is deleted. A replayed row keeps its id, so one written twice is stored once.
 */
export class LedgerJournal {
  private readonly dir: string;
  private readonly base: string;
  private segment: number;
  private fd: number;

  constructor(prefix: string) {
    this.dir = dirname(prefix);
    this.base = basename(prefix);
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    this.segment = (this.segments().at(-1) ?? 0) + 1;
    this.fd = openSync(this.file(this.segment), 'a', 0o600);
  }

  /** Rows an earlier process journaled and may not have written; a line cut short by the kill is skipped. */
  leftOver(): LedgerRow[] {
    const rows: LedgerRow[] = [];
    for (const segment of this.segments()) {
      if (segment >= this.segment) continue;
      for (const line of readFileSync(this.file(segment), 'utf8').split('\n')) {
        try {
          if (line !== '') rows.push(JSON.parse(line) as LedgerRow);
        } catch {
          // The last line of a process killed mid-write: its response never ended either.
        }
      }
    }
    return rows;
  }

  /** Appends one row; throws when the disk refuses (the caller reports it). */
  append(row: LedgerRow): void {
    writeSync(this.fd, `${JSON.stringify(row)}\n`);
  }

  /** Closes the open segment and opens the next: answers the last sealed one. */
  seal(): number {
    closeSync(this.fd);
    this.segment += 1;
    this.fd = openSync(this.file(this.segment), 'a', 0o600);
    return this.segment - 1;
  }

  /** Deletes the segments up to `mark`: every row in them is written. */
  release(mark: number): void {
    for (const segment of this.segments()) if (segment <= mark) unlinkSync(this.file(segment));
  }

  /** Closes the open segment, deleting it too when `empty` (every row written). */
  close(empty: boolean): void {
    closeSync(this.fd);
    if (empty) this.release(this.segment);
  }

  private segments(): number[] {
    const pattern = /^(.*)\.(\d+)\.jsonl$/;
    const found: number[] = [];
    for (const name of readdirSync(this.dir)) {
      const match = pattern.exec(name);
      if (match?.[1] === this.base) found.push(Number(match[2]));
    }
    return found.sort((a, b) => a - b);
  }

  private file(segment: number): string {
    return join(this.dir, `${this.base}.${segment}.jsonl`);
  }
}
