import { describe, expect, it } from 'vitest';
import { seriesByTeam } from '../../../console/src/ui/series.js';

describe('seriesByTeam (the console\'s cost-per-day charts)', () => {
  it('sums each team\'s cost per day in the days\' order, 0 where it spent nothing, teams by name, days outside left out', () => {
    const days = ['2026-11-01', '2026-11-02', '2026-11-03'];
    const entries = [
      { day: '2026-11-02', team: 'team-b', cost: 1.5 },
      { day: '2026-11-01', team: 'team-a', cost: '0.25' },
      { day: '2026-11-02', team: 'team-b', cost: '2' },
      { day: '2026-10-31', team: 'team-a', cost: 9 },
      { day: '2026-11-03', team: 'team-a', cost: 0.5 },
    ];
    expect(seriesByTeam(days, entries)).toEqual([
      { label: 'team-a', values: [0.25, 0, 0.5] },
      { label: 'team-b', values: [0, 3.5, 0] },
    ]);
    expect(seriesByTeam(days, [])).toEqual([]);
  });
});
