import { describe, expect, it } from 'vitest';
import { cpuTimesNow, describeMachine, stealBetween, stealSince } from '../processes/machine.js';

/** The bench's note of how much CPU time a shared host's hypervisor took during a run (bench/processes/machine.ts). */
describe('steal over a run', () => {
  // /proc/stat's first line: user nice system idle iowait irq softirq steal guest guest_nice.
  const before = 'cpu  1000 10 200 5000 10 0 30 100 400 0';
  // 600 ticks passed: 300 user, 60 system, 150 idle, 90 steal; guest time (+200) is already within user time and is not counted twice.
  const after = 'cpu  1300 10 260 5150 10 0 30 190 600 0';

  it('is the steal ticks as a share of all CPU time between the two readings', () => {
    expect(stealBetween(before, after)).toBeCloseTo(90 / 600, 10);
  });

  it('is 0 when no time passed', () => {
    expect(stealBetween(before, before)).toBe(0);
  });

  it('reads this machine, and is a share between 0 and 1', () => {
    const now = cpuTimesNow();
    expect(now).toMatch(/^cpu\s+\d+/);
    const share = stealBetween(now!, cpuTimesNow()!);
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
  });

  it('since a reading at the start: a share of this machine\'s time, or none without a reading', () => {
    const share = stealSince(cpuTimesNow());
    expect(share).toBeGreaterThanOrEqual(0);
    expect(share).toBeLessThanOrEqual(1);
    expect(stealSince(undefined)).toBeUndefined();
  });

  it('goes on the machine line when known, and is left out when not', () => {
    expect(describeMachine(1.5, 0.107)).toMatch(/; 1-minute load average 1\.50 when the run started; 10\.7% of the CPU time taken by the hypervisor for other guests during the run \(steal\)$/);
    expect(describeMachine(1.5)).toMatch(/1-minute load average 1\.50 when the run started$/);
  });
});
