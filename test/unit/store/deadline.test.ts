import { describe, expect, it } from 'vitest';
import { timeLeft, withinDeadline } from '../../../src/store/index.js';

/** A promise and the function that resolves it: the test decides when a call's work goes on. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

describe('store call deadlines', () => {
  it('bounds the statements of a call, across awaits, and leaves code outside any call unbounded', async () => {
    expect(timeLeft().ms).toBe(Infinity);
    const seen = await withinDeadline(5000, async () => {
      const before = timeLeft().ms;
      await Promise.resolve();
      return [before, timeLeft().ms];
    });
    for (const ms of seen) expect(ms).toBeGreaterThan(4000);
    for (const ms of seen) expect(ms).toBeLessThanOrEqual(5000);
    expect(timeLeft().ms).toBe(Infinity);
  });

  it('keeps the bound of a call still running when an overlapping one has settled', async () => {
    const second = gate();
    let secondLeft: number | undefined;
    let secondWork!: Promise<void>;
    const secondCall = withinDeadline(60_000, () => (secondWork = (async () => {
      await second.opened;
      secondLeft = timeLeft().ms;
    })()));
    await withinDeadline(5000, async () => undefined);
    second.open();
    await secondCall;
    await secondWork;
    expect(secondLeft).toBeGreaterThan(5000);
    expect(timeLeft().ms).toBe(Infinity);
  });

  it('keeps the bound of a call that ran out of time until its work settles: its late statements find no time left', async () => {
    const late = gate();
    let left: number | undefined;
    let work!: Promise<void>;
    const call = withinDeadline(1, () => (work = (async () => {
      await late.opened;
      left = timeLeft().ms;
    })()));
    await expect(call).rejects.toThrow('database did not answer within 1 ms');
    late.open();
    await work;
    expect(left).toBeLessThanOrEqual(0);
  });

  it('rejects a call that throws before returning a promise, and bounds the next call as usual', async () => {
    await expect(withinDeadline(5000, () => { throw new Error('bad statement'); })).rejects.toThrow('bad statement');
    const ms = await withinDeadline(5000, async () => timeLeft().ms);
    expect(ms).toBeLessThanOrEqual(5000);
    expect(ms).toBeGreaterThan(4000);
  });
});
