import { describe, expect, it } from 'vitest';
import { KeyExpiryWatch } from '../../../src/keys/index.js';
import type { NotificationEvent } from '../../../src/limits/index.js';
import type { ApiKeyRecord } from '../../../src/store/index.js';

const DAY_MS = 86_400_000;
const T0 = Date.parse('2026-11-01T12:00:00.000Z');

const keyRecord = (id: string, expiresAt: string | null, extra: Partial<ApiKeyRecord> = {}): ApiKeyRecord => ({
  id,
  team: 'team-a',
  projects: ['*'],
  defaultProject: 'default',
  limits: {},
  description: 'ci',
  createdAt: new Date(T0).toISOString(),
  expiresAt,
  disabled: false,
  revokedAt: null,
  ...extra,
});

/** A watch on `records` whose clock the test moves; the published events, in order. */
function watch(records: ApiKeyRecord[]): { clock: { now: number }; published: NotificationEvent[]; watch: KeyExpiryWatch } {
  const clock = { now: T0 };
  const published: NotificationEvent[] = [];
  const w = new KeyExpiryWatch(() => records, { publish: (e) => void published.push(e) }, () => clock.now);
  return { clock, published, watch: w };
}

describe('key.expiring (SPEC 24): 7 days and 1 day before a key expires', () => {
  it('publishes the 7-day notice once inside 7 days, the 1-day notice once inside 1 day, nothing after expiry', () => {
    const expiresAt = new Date(T0 + 10 * DAY_MS).toISOString();
    const { clock, published, watch: w } = watch([keyRecord('key-1', expiresAt)]);
    w.checkAll();
    expect(published).toEqual([]);
    clock.now = T0 + 3 * DAY_MS + 1;
    w.checkAll();
    w.checkAll();
    clock.now = T0 + 5 * DAY_MS;
    w.checkAll();
    expect(published).toEqual([
      {
        id: `key.expiring/key-1/${expiresAt}/7d`,
        type: 'key.expiring',
        time: new Date(T0 + 3 * DAY_MS + 1).toISOString(),
        team: 'team-a',
        data: { key: 'key-1', team: 'team-a', description: 'ci', expiresAt, days: 7 },
      },
    ]);
    clock.now = T0 + 9 * DAY_MS;
    w.checkAll();
    clock.now = T0 + 9 * DAY_MS + 60_000;
    w.checkAll();
    expect(published.map((e) => e.id)).toEqual([`key.expiring/key-1/${expiresAt}/7d`, `key.expiring/key-1/${expiresAt}/1d`]);
    expect(published[1]!.data['days']).toBe(1);
    clock.now = T0 + 10 * DAY_MS;
    w.checkAll();
    expect(published.length).toBe(2);
    w.stop();
  });

  it('a key created or changed inside a notice period gets its notice at once, and only the nearest', () => {
    const records: ApiKeyRecord[] = [];
    const { published, watch: w } = watch(records);
    const inThreeDays = new Date(T0 + 3 * DAY_MS).toISOString();
    records.push(keyRecord('key-2', inThreeDays));
    w.checkKey(records[0]);
    expect(published.map((e) => e.id)).toEqual([`key.expiring/key-2/${inThreeDays}/7d`]);
    // The periodic look does not publish it again.
    w.checkAll();
    // Changed to expire in 12 hours: the 1-day notice at once (a new expiry, a new id).
    const inTwelveHours = new Date(T0 + DAY_MS / 2).toISOString();
    records[0] = keyRecord('key-2', inTwelveHours);
    w.checkKey(records[0]);
    expect(published.map((e) => e.id)).toEqual([`key.expiring/key-2/${inThreeDays}/7d`, `key.expiring/key-2/${inTwelveHours}/1d`]);
    w.stop();
  });

  it('says nothing of keys without expiry, far from it, disabled or revoked', () => {
    const soon = new Date(T0 + DAY_MS).toISOString();
    const { published, watch: w } = watch([
      keyRecord('none', null),
      keyRecord('far', new Date(T0 + 30 * DAY_MS).toISOString()),
      keyRecord('off', soon, { disabled: true }),
      keyRecord('gone', soon, { revokedAt: new Date(T0).toISOString() }),
    ]);
    w.checkAll();
    expect(published).toEqual([]);
    w.stop();
  });
});
