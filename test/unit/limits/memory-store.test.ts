import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type Check, MemoryStore, type Outcome } from '../../../src/limits/index.js';

/**
 * The memory store's own rules, read back through read(): what an admission charges, and what a
 * settlement does with the difference between the estimate and the real use (SPEC 6.3) — a
 * refund only into the window it was charged in, never below zero; an overrun charged even
 * when the window changed or the counter is gone; nothing for a window already over.
 */

const KEY = 'tg:{team-a}:key:k1';
const tokens = (cost: number, max = 1000): Check => ({ scope: 'key', subject: 'key k1', limit: 'tpm', max, cost, windowMs: 60_000, key: KEY });
const requests = (max = 10): Check => ({ scope: 'key', subject: 'key k1', limit: 'rpm', max, cost: 1, windowMs: 60_000, key: KEY });
const slot = (max = 2): Check => ({ scope: 'key', subject: 'key k1', limit: 'concurrency', max, cost: 1, windowMs: 0, key: KEY });

describe('the memory limit store', () => {
  let store: MemoryStore;
  beforeEach(() => {
    store = new MemoryStore();
  });
  afterEach(async () => {
    await store.close();
  });

  const used = async (limit: string): Promise<number | undefined> => (await store.read(KEY)).counters[limit as 'tpm']?.used;
  const admit = (checks: Check[]): Outcome => store.acquire(checks) as Outcome;

  it('charges every check of an admitted request, and nothing of a refused one', async () => {
    const first = admit([requests(), tokens(400), slot()]);
    expect(first.admitted).toBe(true);
    expect(first.used).toEqual([1, 400, 1]);
    const refused = admit([requests(), tokens(700), slot()]);
    expect(refused.admitted).toBe(false);
    expect(refused.used).toEqual([1, 400, 1]);
    expect(await store.read(KEY)).toEqual({ inflight: 1, counters: { rpm: { used: 1, end: first.windowEnds[0] }, tpm: { used: 400, end: first.windowEnds[1] } } });
    // A window's end is the one its first charge opened, reported to a later request too.
    expect(admit([tokens(10)]).windowEnds).toEqual([first.windowEnds[1]]);
  });

  it('charges nothing for a check of cost 0, but still refuses it when the limit is used up', async () => {
    admit([tokens(1000)]);
    expect(admit([tokens(0)]).admitted).toBe(false);
    expect(await used('tpm')).toBe(1000);
    const other = 'tg:{team-a}:key:k2';
    expect(store.acquire([{ ...tokens(0), key: other }])).toMatchObject({ admitted: true, used: [0] });
    expect((await store.read(other)).counters).toEqual({});
  });

  it('refunds into the window the estimate was charged in, never below zero; charges an overrun', async () => {
    const { windowEnds } = admit([tokens(400)]);
    store.settle([tokens(400)], [-150], windowEnds);
    expect(await used('tpm')).toBe(250);
    store.settle([tokens(400)], [+90], windowEnds);
    expect(await used('tpm')).toBe(340);
    store.settle([tokens(400)], [-1000], windowEnds);
    expect(await used('tpm')).toBe(0);
    store.settle([tokens(400)], [0], windowEnds);
    expect(await used('tpm')).toBe(0);
  });

  it('drops a refund meant for another window, and charges an overrun into the live one', async () => {
    const { windowEnds } = admit([tokens(400)]);
    const earlierWindow = [windowEnds[0]! - 30_000];
    store.settle([tokens(400)], [-100], earlierWindow);
    expect(await used('tpm')).toBe(400);
    store.settle([tokens(400)], [+100], earlierWindow);
    expect(await used('tpm')).toBe(500);
  });

  it('does nothing for a window that is already over', async () => {
    admit([tokens(400)]);
    store.settle([tokens(400)], [+100], [Date.now() - 1]);
    store.settle([tokens(400)], [-100], [Date.now() - 1]);
    expect(await used('tpm')).toBe(400);
  });

  it('charges an overrun whose counter is gone until the request window ends, and drops a refund there', async () => {
    const end = Date.now() + 45_000;
    store.settle([tokens(400)], [-50], [end]);
    expect((await store.read(KEY)).counters).toEqual({});
    store.settle([tokens(400)], [+70], [end]);
    expect(await store.read(KEY)).toEqual({ inflight: 0, counters: { tpm: { used: 70, end } } });
  });

  it('frees an in-flight slot on settle, never below zero', async () => {
    const { windowEnds } = admit([slot()]);
    admit([slot()]);
    expect((await store.read(KEY)).inflight).toBe(2);
    expect(admit([slot()]).admitted).toBe(false);
    store.settle([slot()], [0], windowEnds);
    expect((await store.read(KEY)).inflight).toBe(1);
    store.settle([slot()], [0], windowEnds);
    store.settle([slot()], [0], windowEnds);
    expect((await store.read(KEY)).inflight).toBe(0);
    expect(admit([slot()]).admitted).toBe(true);
  });
});
