import type { TeamConfig } from '../config/index.js';
import type { LimitSet, TeamLimitSource } from '../limits/index.js';
import type { TeamRecord } from '../store/index.js';

/** A team as this instance holds it: from the config file (read-only) or the durable store. */
export interface Team {
  readonly id: string;
  readonly description: string | null;
  /** The same object until the team's limits change (the limit plan is cached by it). */
  readonly limits: LimitSet;
  readonly disabled: boolean;
  /** Its own model patterns (SPEC 21); null or absent: `models.default`. The same array until they change. */
  readonly models?: readonly string[] | null | undefined;
  readonly createdAt: string | null;
  readonly source: 'api' | 'config';
}

const fromConfig = (team: TeamConfig): Team => ({ ...team, createdAt: null, source: 'config' });
const fromRecord = (record: TeamRecord): Team => ({ ...record, limits: record.limits as LimitSet, source: 'api' });

/**
 * Every team with a record (SPEC 16), in memory: the request path asks it per request (a team's
 * limits, whether it is disabled) with one map probe. Config teams win over a stored team of the
 * same id, as config keys do. Filled by the store's change feed (team-sync.ts) and by reloads.
 */
export class TeamDirectory implements TeamLimitSource {
  private configTeams = new Map<string, Team>();
  private storedTeams = new Map<string, Team>();
  private merged = new Map<string, Team>();

  constructor(configTeams: readonly TeamConfig[]) {
    this.configure(configTeams);
  }

  /** A reload's `teams:`; a team whose entry did not change keeps its object (and so its limit plan). */
  configure(configTeams: readonly TeamConfig[]): void {
    const next = new Map<string, Team>();
    for (const team of configTeams) {
      const previous = this.configTeams.get(team.id);
      next.set(team.id, previous && JSON.stringify(previous) === JSON.stringify(fromConfig(team)) ? previous : fromConfig(team));
    }
    this.configTeams = next;
    this.merge();
  }

  replaceAll(records: readonly TeamRecord[]): void {
    this.storedTeams = new Map(records.map((record) => [record.id, this.keepIfSame(fromRecord(record))]));
    this.merge();
  }

  apply(id: string, record: TeamRecord | undefined): void {
    if (record) this.storedTeams.set(id, this.keepIfSame(fromRecord(record)));
    else this.storedTeams.delete(id);
    this.merge();
  }

  get(id: string): Team | undefined {
    return this.merged.get(id);
  }

  isConfigTeam(id: string): boolean {
    return this.configTeams.has(id);
  }

  list(): Team[] {
    return [...this.merged.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  }

  limitsOf(team: string): LimitSet | undefined {
    return this.merged.get(team)?.limits;
  }

  /** The team's own model patterns (SPEC 21), read per chat request: one map probe. */
  modelsOf(team: string): readonly string[] | null | undefined {
    return this.merged.get(team)?.models;
  }

  isDisabled(team: string): boolean {
    return this.merged.get(team)?.disabled === true;
  }

  /** An unchanged stored team keeps its object, so a full refresh does not rebuild every team's limit plan. */
  private keepIfSame(team: Team): Team {
    const previous = this.storedTeams.get(team.id);
    return previous && JSON.stringify(previous) === JSON.stringify(team) ? previous : team;
  }

  private merge(): void {
    this.merged = new Map([...this.storedTeams, ...this.configTeams]);
  }
}
