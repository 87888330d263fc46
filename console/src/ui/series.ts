/** One line of a day chart: a label and a value per day. */
export interface DaySeries {
  readonly label: string;
  readonly values: readonly number[];
}

/**
 * Each team's cost on each of `days` (0 where it spent nothing), summed in one pass over the
 * entries: a month of 20 teams' per-project rows is thousands, and a filter per day and team
 * would read them all 600 times.
 */
export function seriesByTeam(days: readonly string[], entries: ReadonlyArray<{ readonly day?: string; readonly team: string; readonly cost: number | string }>): DaySeries[] {
  const column = new Map(days.map((day, i) => [day, i]));
  const sums = new Map<string, number[]>();
  for (const entry of entries) {
    const i = column.get(entry.day ?? '');
    if (i === undefined) continue;
    const values = sums.get(entry.team) ?? days.map(() => 0);
    values[i]! += Number(entry.cost);
    sums.set(entry.team, values);
  }
  return [...sums.keys()].sort().map((team) => ({ label: team, values: sums.get(team)! }));
}
