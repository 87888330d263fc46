import type { EventSink, NotificationEvent } from '../outbox/index.js';
import type { ApiKeyRecord } from '../store/index.js';

const DAY_MS = 86_400_000;

/** The notices before a key's `expiresAt` (SPEC 24), nearest last: a key inside several periods gets the nearest one's. */
const NOTICE_DAYS = [7, 1] as const;

/** How often every key is looked at again: a notice is at most this late (keys created or changed are looked at at once). */
const CHECK_INTERVAL_MS = 60_000;

/** The `key.expiring` notice due for a key at `now`, if any: the nearest notice period it is inside. */
export function expiryNotice(record: ApiKeyRecord, now: number): NotificationEvent | undefined {
  if (record.expiresAt === null || record.revokedAt !== null || record.disabled) return undefined;
  const expiresAt = Date.parse(record.expiresAt);
  const left = expiresAt - now;
  if (!(left > 0)) return undefined;
  let days: number | undefined;
  for (const notice of NOTICE_DAYS) if (left <= notice * DAY_MS) days = notice;
  if (days === undefined) return undefined;
  const at = new Date(expiresAt).toISOString();
  return {
    // Stable: the same key, expiry and notice is the same event on every instance and after restarts.
    id: `key.expiring/${record.id}/${at}/${days}d`,
    type: 'key.expiring',
    time: new Date(now).toISOString(),
    team: record.team,
    data: { key: record.id, team: record.team, description: record.description, expiresAt: at, days },
  };
}

/**
 * `key.expiring` (SPEC 24): 7 days and 1 day before a runtime key's `expiresAt`, published to the
 * outbox. Every instance looks (every minute, and at once at a key created or changed); the event
 * id is the same wherever it is decided, so the outbox stores and delivers it once. An instance
 * does not publish the same notice twice.
 */
export class KeyExpiryWatch {
  /** Ids of the notices due at the last look, already published. */
  private published = new Set<string>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly records: () => readonly ApiKeyRecord[],
    private readonly sink: EventSink,
    private readonly now: () => number = Date.now,
    intervalMs = CHECK_INTERVAL_MS,
  ) {
    this.timer = setInterval(() => this.checkAll(), intervalMs);
    this.timer.unref();
  }

  /** Looks at every key: publishes the notices newly due. */
  checkAll(): void {
    const now = this.now();
    const due = new Set<string>();
    for (const record of this.records()) {
      const notice = expiryNotice(record, now);
      if (notice === undefined) continue;
      due.add(notice.id);
      if (!this.published.has(notice.id)) this.sink.publish(notice);
    }
    this.published = due;
  }

  /** Looks at one key as it now is (created or changed): a key already inside a notice period gets its notice at once. */
  checkKey(record: ApiKeyRecord | undefined): void {
    if (record === undefined) return;
    const notice = expiryNotice(record, this.now());
    if (notice === undefined || this.published.has(notice.id)) return;
    this.published.add(notice.id);
    this.sink.publish(notice);
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
