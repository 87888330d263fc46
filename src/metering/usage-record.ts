export interface UsageCounts {
  requests: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/**
 * One metered request as the pipeline reports it, and the finest grain the stores keep: one
 * UTC day × team × project × model × key, with counts summed.
 */
export interface UsageRecord extends UsageCounts {
  /** UTC day, YYYY-MM-DD (see utcDay()). */
  day: string;
  team: string;
  project: string;
  model: string;
  /** The key id or JWT subject; never the secret. */
  keyId: string;
}

/** Counts are stored with HINCRBY: whole, non-negative numbers only. */
const count = (value: number): number => (Number.isFinite(value) && value > 0 ? Math.floor(value) : 0);

/** Identifies a cell (day × team × project × model × key) in a Map; unambiguous for any strings. */
export const cellKey = (r: UsageRecord): string => JSON.stringify([r.day, r.team, r.project, r.model, r.keyId]);

/** A fresh cell holding a sanitised copy of a record (callers may reuse their record object). */
function toCell(r: UsageRecord): UsageRecord {
  return {
    day: r.day,
    team: r.team,
    project: r.project,
    model: r.model,
    keyId: r.keyId,
    requests: count(r.requests),
    prompt_tokens: count(r.prompt_tokens),
    completion_tokens: count(r.completion_tokens),
    total_tokens: count(r.total_tokens),
  };
}

/** Adds `counts` into `cell`. */
export function addCounts(cell: UsageCounts, counts: UsageCounts): void {
  cell.requests += count(counts.requests);
  cell.prompt_tokens += count(counts.prompt_tokens);
  cell.completion_tokens += count(counts.completion_tokens);
  cell.total_tokens += count(counts.total_tokens);
}

/** Adds a record into a map of cells keyed by cellKey; returns true when it made a new cell. */
export function addToCells(cells: Map<string, UsageRecord>, r: UsageRecord, key: string = cellKey(r)): boolean {
  const cell = cells.get(key);
  if (cell === undefined) {
    cells.set(key, toCell(r));
    return true;
  }
  addCounts(cell, r);
  return false;
}
