import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { type Check, MemoryStore, type Outcome } from '../../../src/limits/index.js';

/**
 * The memory store on a clock the test moves: a window ends at its end instant, a new window
 * replaces an old counter, what read() shows, and the sweep that forgets ended windows (every
 * minute) without touching live counters or taken in-flight slots.
 */

const T0 = Date.UTC(2025, 4, 1, 12, 0, 0);
const KEY = 'tg:{team-a}:key:k1';
const tokens = (cost: number, windowMs = 60_000): Check => ({ scope: 'key', subject: 'key k1', limit: 'tpm', max: 1000, cost, windowMs, key: KEY });
const slot = (): Check => ({ scope: 'key', subject: 'key k1', limit: 'concurrency', max: 1, cost: 1, windowMs: 0, key: KEY });

describe('the memory limit store over time', () => {
  let store: MemoryStore;
  beforeEach(() => {
    vi.useFakeTimers({ now: T0 });
    store = new MemoryStore();
  });
  afterEach(async () => {
    await store.close();
    vi.useRealTimers();
  });
  const admit = (checks: Check[]): Outcome => store.acquire(checks) as Outcome;

  it('is always ready', async () => {
    expect(store.ready()).toBe(true);
    expect(await store.whenReady()).toBe(true);
  });

  it('ends a window at its end instant: the next request opens a new one', async () => {
    expect(admit([tokens(600)]).windowEnds).toEqual([T0 + 60_000]);
    vi.setSystemTime(T0 + 59_999);
    expect(admit([tokens(600)])).toEqual({ admitted: false, used: [600], resetMs: [1], windowEnds: [T0 + 60_000] });
    expect(await store.read(KEY)).toEqual({ inflight: 0, counters: { tpm: { used: 600, end: T0 + 60_000 } } });
    vi.setSystemTime(T0 + 60_000);
    expect(await store.read(KEY)).toEqual({ inflight: 0, counters: {} });
    expect(admit([tokens(600)])).toEqual({ admitted: true, used: [600], resetMs: [60_000], windowEnds: [T0 + 120_000] });
    // The new window's counter replaced the old one: a third request is counted against it.
    expect(admit([tokens(600)]).admitted).toBe(false);
    expect(await store.read(KEY)).toEqual({ inflight: 0, counters: { tpm: { used: 600, end: T0 + 120_000 } } });
  });

  it('keeps live counters and taken slots through the sweep, and forgets ended windows', async () => {
    admit([tokens(600, 10 * 60_000), slot()]);
    vi.advanceTimersByTime(61_000); // one sweep
    expect(await store.read(KEY)).toEqual({ inflight: 1, counters: { tpm: { used: 600, end: T0 + 600_000 } } });
    expect(admit([tokens(600, 10 * 60_000)]).admitted).toBe(false);
    expect(admit([slot()]).admitted).toBe(false);
  });

  it('keeps a taken slot of a scope whose counters all ended', async () => {
    const { windowEnds } = admit([tokens(100), slot()]);
    vi.advanceTimersByTime(121_000); // two sweeps; the tpm window ended at T0 + 60 s
    expect(await store.read(KEY)).toEqual({ inflight: 1, counters: {} });
    expect(admit([slot()]).admitted).toBe(false);
    store.settle([slot()], [0], [windowEnds[1]!]);
    expect(admit([slot()]).admitted).toBe(true);
  });

  it('charges an overrun into the request window when the counter there has ended but is not swept yet', async () => {
    admit([tokens(100)]); // its window ends at T0 + 60 s
    vi.setSystemTime(T0 + 60_000); // ended this instant; the sweep has not run
    store.settle([tokens(100)], [+50], [T0 + 90_000]);
    expect(await store.read(KEY)).toEqual({ inflight: 0, counters: { tpm: { used: 50, end: T0 + 90_000 } } });
  });

  it('forgets a scope once its windows ended and its slots were freed, at the next sweep; stops sweeping when closed', async () => {
    const other = { ...tokens(100), key: 'tg:{team-a}:key:k2' };
    const { windowEnds } = admit([tokens(100), slot()]);
    admit([other]);
    expect(store.scopeCount).toBe(2);
    store.settle([slot()], [0], [windowEnds[1]!]);
    vi.advanceTimersByTime(61_000); // the sweep at T0 + 60 s finds both windows ended (end <= now)
    expect(store.scopeCount).toBe(0);
    expect(vi.getTimerCount()).toBe(1);
    await store.close();
    expect(vi.getTimerCount()).toBe(0);
  });

  it('keeps the live counters of a scope with no slot taken', async () => {
    admit([tokens(700, 10 * 60_000)]);
    vi.advanceTimersByTime(61_000);
    expect(admit([tokens(400, 10 * 60_000)]).admitted).toBe(false);
  });
});
