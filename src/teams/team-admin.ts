import { errors, type GatewayError } from '../errors.js';
import { configuredLimits, counterLimit, limitKind, type Limiter, type LimitName, type LimitSet, type ScopeReading } from '../limits/index.js';
import { nanosToAmount } from '../money.js';
import { DatabaseUnavailableError, type StoreHandle, type StoreMirror, TeamIdTakenError, type TeamPatch } from '../store/index.js';
import type { Team, TeamDirectory } from './directory.js';

/** What a team spent in one calendar window, as its record shows it. */
export interface SpendView {
  readonly requests: number;
  readonly total_tokens: number;
  readonly cost: number;
}

/** A team record as the admin API answers it (SPEC 16). */
export interface TeamView {
  readonly id: string;
  readonly description: string | null;
  readonly limits: LimitSet;
  /** Its own model patterns (SPEC 21); null: none of its own (`models.default`). */
  readonly models: readonly string[] | null;
  readonly disabled: boolean;
  readonly createdAt: string | null;
  readonly source: 'api' | 'config';
  readonly spend: { readonly day: SpendView; readonly month: SpendView };
  /** Per configured limit, what is left of it now (cost budgets in the price currency). */
  readonly remaining: Partial<Record<LimitName, number>>;
}

export interface NewTeam {
  readonly id: string;
  readonly description?: string | null;
  readonly limits?: LimitSet;
  readonly models?: readonly string[] | null;
}

export const teamNotFound = (id: string): GatewayError => errors.teamNotFound(id);

function spendOf(reading: ScopeReading, window: 'day' | 'month'): SpendView {
  const used = (what: 'requests' | 'tokens' | 'cost'): number => reading.counters[`spend.${window}.${what}`]?.used ?? 0;
  return { requests: used('requests'), total_tokens: used('tokens'), cost: nanosToAmount(used('cost')) };
}

function remainingOf(limits: LimitSet, reading: ScopeReading): Partial<Record<LimitName, number>> {
  const remaining: Partial<Record<LimitName, number>> = {};
  for (const [name, configured] of configuredLimits(limits)) {
    const kind = limitKind(name);
    const used = kind.unit === 'inflight' ? reading.inflight : (reading.counters[name]?.used ?? 0);
    const left = Math.max(0, counterLimit(kind, configured) - used);
    remaining[name] = kind.unit === 'cost' ? nanosToAmount(left) : left;
  }
  return remaining;
}

const NOTHING_COUNTED: ScopeReading = { inflight: 0, counters: {} };

/**
 * Teams at runtime (SPEC 16): reads from this instance's directory and the limit counters (one
 * read of the team's scope, never a ledger scan), writes to the durable store, applied here at
 * once and on every other instance when the change is announced.
 */
export class TeamAdmin {
  constructor(
    private readonly handle: StoreHandle,
    private readonly teams: TeamDirectory,
    private readonly sync: StoreMirror,
    private readonly limiter: Limiter,
    /** The teams the config file's keys (auth.keys[].team) name now: keys too, so they hold their team (SPEC 16). */
    private readonly configKeyTeams: () => readonly { readonly team: string }[],
  ) {}

  exists(id: string): boolean {
    return this.teams.get(id) !== undefined;
  }

  limitsOf(id: string): LimitSet | undefined {
    return this.teams.limitsOf(id);
  }

  async list(only?: string): Promise<TeamView[]> {
    const teams = this.teams.list().filter((team) => only === undefined || team.id === only);
    return Promise.all(teams.map((team) => this.view(team)));
  }

  async get(id: string): Promise<TeamView> {
    const team = this.teams.get(id);
    if (!team) throw teamNotFound(id);
    return this.view(team);
  }

  async create(input: NewTeam): Promise<TeamView> {
    this.refuseConfigTeam(input.id);
    const record = { id: input.id, description: input.description ?? null, limits: { ...(input.limits ?? {}) }, models: input.models ? [...input.models] : null, disabled: false, createdAt: new Date().toISOString() };
    try {
      await this.handle.require().createTeam(record);
    } catch (err) {
      if (err instanceof TeamIdTakenError) throw errors.teamExists(input.id);
      throw asAdminError(err);
    }
    await this.sync.loadOne(input.id);
    return this.get(input.id);
  }

  async update(id: string, patch: TeamPatch): Promise<TeamView> {
    this.refuseConfigTeam(id);
    const updated = await this.write(() => this.handle.require().updateTeam(id, patch));
    if (!updated) throw teamNotFound(id);
    await this.sync.loadOne(id);
    return this.get(id);
  }

  async delete(id: string): Promise<void> {
    this.refuseConfigTeam(id);
    if (this.configKeyTeams().some((key) => key.team === id)) throw this.exists(id) ? errors.teamInUse(id) : teamNotFound(id);
    const result = await this.write(() => this.handle.require().deleteTeam(id));
    if (result === 'not_found') throw teamNotFound(id);
    if (result === 'in_use') throw errors.teamInUse(id);
    await this.sync.loadOne(id);
  }

  private async view(team: Team): Promise<TeamView> {
    // A store that cannot answer: the record still shows, with nothing counted rather than a 503.
    const reading = await this.limiter.readTeam(team.id).catch(() => NOTHING_COUNTED);
    const { id, description, limits, disabled, createdAt, source } = team;
    return { id, description, limits, models: team.models ?? null, disabled, createdAt, source, spend: { day: spendOf(reading, 'day'), month: spendOf(reading, 'month') }, remaining: remainingOf(limits, reading) };
  }

  private refuseConfigTeam(id: string): void {
    if (this.teams.isConfigTeam(id)) {
      throw errors.readOnlyTeam(id);
    }
  }

  private async write<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      throw asAdminError(err);
    }
  }
}

function asAdminError(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) {
    return errors.databaseUnavailableForChange();
  }
  return err;
}
