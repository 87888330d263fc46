import { aggregateUsage, daysInRange, matchesQuery, type UsageQuery, type UsageRow } from './usage-aggregate.js';
import { addToCells, cellKey, type UsageRecord } from './usage-record.js';
import type { UsageStore } from './usage-store.js';

/** Usage kept in this process (no Redis configured): one map of cells per UTC day. */
export class MemoryUsageStore implements UsageStore {
  private readonly days = new Map<string, Map<string, UsageRecord>>();

  record(r: UsageRecord): void {
    let cells = this.days.get(r.day);
    if (cells === undefined) {
      cells = new Map();
      this.days.set(r.day, cells);
    }
    addToCells(cells, r, cellKey(r));
  }

  query(q: UsageQuery): Promise<UsageRow[]> {
    return Promise.resolve(aggregateUsage(this.cellsFor(q), q.groupBy));
  }

  flush(): Promise<void> {
    return Promise.resolve();
  }

  close(): Promise<void> {
    return Promise.resolve();
  }

  private *cellsFor(q: UsageQuery): Generator<UsageRecord> {
    for (const day of daysInRange(q.from, q.to)) {
      for (const cell of this.days.get(day)?.values() ?? []) {
        if (matchesQuery(q, cell.team, cell.project)) yield cell;
      }
    }
  }
}
