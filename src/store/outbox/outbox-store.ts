import type { Kysely } from 'kysely';
import type * as Store from '../core/durable-store.js';
import type { Database } from '../core/schema.js';
import { type Dialect, saveCursor, selectCursor, selectLedgerAfter } from './export-queries.js';
import { countPending, deleteFinished, holdsLease, insertDeliveries, releaseLease, selectDelivery, selectDeliveries, selectDue, takeLease, updateResult } from './outbox-queries.js';

type Run = <T>(work: (db: Kysely<Database>) => Promise<T>) => Promise<T>;

/** The outbox on the one store: every call goes through the store's bounded `call`, writes that must hold together through its transaction. */
export class KyselyOutboxStore implements Store.OutboxStore {
  constructor(
    private readonly dialect: Dialect,
    private readonly call: Run,
    private readonly transaction: Run,
    private readonly file: Store.LedgerFile | undefined,
  ) {}

  insertDeliveries(rows: readonly Store.OutboxInsert[]): Promise<number> {
    return this.call((db) => insertDeliveries(db, rows));
  }
  takeLease(name: string, owner: string, now: string, until: string): Promise<boolean> {
    return this.transaction((db) => takeLease(db, name, owner, now, until));
  }
  releaseLease(name: string, owner: string): Promise<void> {
    return this.call((db) => releaseLease(db, name, owner));
  }
  dueDeliveries(now: string, limit: number): Promise<Store.OutboxDelivery[]> {
    return this.call((db) => selectDue(db, now, limit));
  }
  recordResult(id: string, result: Store.OutboxResult): Promise<void> {
    return this.call((db) => updateResult(db, id, result));
  }
  listDeliveries(filter: Store.OutboxFilter): Promise<Store.OutboxDelivery[]> {
    return this.call((db) => selectDeliveries(db, filter));
  }
  getDelivery(id: string): Promise<Store.OutboxDelivery | undefined> {
    return this.call((db) => selectDelivery(db, id));
  }
  deleteFinishedBefore(before: string, kept: Store.FinishedKept): Promise<number> {
    return this.call((db) => deleteFinished(db, before, kept));
  }
  pendingCounts(): Promise<Map<string, number>> {
    return this.call((db) => countPending(db));
  }
  exportCursor(sink: string): Promise<Store.LedgerMark | null> {
    return this.call((db) => selectCursor(db, sink));
  }
  commitExport(sink: string, mark: Store.LedgerMark, delivery: Store.OutboxInsert, result: Store.OutboxResult, fence?: Store.LeaseFence): Promise<boolean> {
    return this.transaction(async (db) => {
      if (fence !== undefined && !(await holdsLease(db, this.dialect, fence))) return false;
      await insertDeliveries(db, [delivery]);
      await updateResult(db, delivery.id, result);
      await saveCursor(db, this.dialect, sink, mark.id, result.at);
      return true;
    });
  }
  ledgerFile(): Store.LedgerFile | undefined {
    return this.file;
  }
  ledgerAfter(mark: Store.LedgerMark | null, before: string, limit: number): Promise<Store.LedgerRow[]> {
    return this.call((db) => selectLedgerAfter(db, this.dialect, mark, before, limit));
  }
}
