import type { Config } from '../config/index.js';
import type { Principal, ProjectRef } from '../auth/index.js';
import { msToUtcMidnight, msToUtcMonthEnd, utcMonthStart } from '../calendar.js';
import { counterLimit, isBudget, LIMIT_KINDS, SPEND_KINDS, UNLIMITED_MAX, type CounterName, type LimitKind, type LimitSet } from '../limit-kinds/index.js';
import type { AlertScope, Check, LimitScope } from './store.js';

/** Projects whose checks are kept ready; past this the cache starts over (`team/*` admits any project name). */
const MAX_CACHED_PROJECTS = 10_000;

/** A configured limit of a LimitSet, in table order. */
interface CompiledLimit {
  readonly limit: CounterName;
  readonly kind: LimitKind;
  readonly max: number;
  /** A budget of a `soft` set: alerts, never refuses. */
  readonly soft: boolean;
  /** A budget (not a team's spend counter): its thresholds alert. */
  readonly budget: boolean;
}

function compile(set: LimitSet): readonly CompiledLimit[] {
  const limits: CompiledLimit[] = [];
  for (const kind of LIMIT_KINDS) {
    const configured = set[kind.name];
    if (configured !== undefined) limits.push({ limit: kind.name, kind, max: counterLimit(kind, configured), soft: set.soft === true && isBudget(kind), budget: isBudget(kind) });
  }
  return limits;
}

/**
 * The limits of the teams that have a record (SPEC 16), by team id: undefined for a team with
 * none (no team scope at all). The same LimitSet object until the team's limits change, so the
 * plan built from it is kept.
 */
export interface TeamLimitSource {
  limitsOf(team: string): LimitSet | undefined;
}

/** A team scope also counts its spend (never refusing), so its record can show it without a ledger scan. */
const SPEND_COUNTERS: readonly CompiledLimit[] = SPEND_KINDS.map((kind) => ({ limit: kind.name, kind, max: UNLIMITED_MAX, soft: false, budget: false }));

/** What one request reserves: its estimated tokens and cost (in nano-units of the currency). */
export interface Reservation {
  readonly tokens: number;
  readonly costNanos: number;
  /** Whether it can spend tokens or money at all (a chat completion); absent: it can. */
  readonly spends?: boolean;
}

/** What varies per request: what it reserves and how much of the UTC day and month is left. */
interface RequestTerms {
  readonly tokens: number;
  readonly costNanos: number;
  /** False: token and cost limits do not apply (they are read for the headers, never refuse). */
  readonly spends: boolean;
  readonly msToMidnight: number;
  readonly msToMonthEnd: number;
}

/** What a check of a limit that is neither soft nor alerting adds: nothing. */
const NO_EXTRAS: { readonly soft?: true; readonly alerts?: AlertScope } = Object.freeze({});

/** Whole, non-negative units: what a counter can be charged. */
export const wholeUnits = (value: number): number => Math.max(0, Math.ceil(value) || 0);

/**
 * The checks of one scope (a principal's or a project's limits), all in one store record (its
 * key, built once). A check whose cost and window never change (one request, a fixed window,
 * an in-flight slot) is one shared object; only the checks of token and cost limits are new
 * per request (they carry the request's amounts, and a calendar one the time left in its day
 * or month, which is the window its first charge opens).
 */
class ScopePlan {
  private readonly fixed: ReadonlyArray<Check | undefined>;
  /** Per limit, what its check adds: `soft` and `alerts` on budgets (SPEC 24), else nothing. */
  private readonly extras: ReadonlyArray<{ readonly soft?: true; readonly alerts?: AlertScope }>;

  constructor(
    private readonly scope: LimitScope,
    private readonly subject: string,
    private readonly key: string,
    private readonly limits: readonly CompiledLimit[],
    alerts: AlertScope | undefined,
  ) {
    this.extras = limits.map(({ soft, budget }) =>
      !soft && (alerts === undefined || !budget) ? NO_EXTRAS : { ...(soft ? { soft: true as const } : {}), ...(alerts !== undefined && budget ? { alerts } : {}) },
    );
    this.fixed = limits.map(({ limit, kind, max }) => {
      // Calendar windows (a spend counter of requests too) are opened with the time left in their day or month.
      if (kind.unit === 'token' || kind.unit === 'cost' || kind.window.type === 'utcDay' || kind.window.type === 'utcMonth') return undefined;
      const windowMs = kind.window.type === 'fixed' ? kind.window.ms : 0;
      return Object.freeze({ scope, subject, limit, max, cost: 1, windowMs, key });
    });
  }

  addTo(checks: Check[], terms: RequestTerms): void {
    const { scope, subject, key } = this;
    for (let i = 0; i < this.limits.length; i++) {
      const fixed = this.fixed[i];
      if (fixed) {
        checks.push(fixed);
        continue;
      }
      const { limit, kind, max } = this.limits[i]!;
      const cost = kind.unit === 'cost' ? terms.costNanos : kind.unit === 'token' ? terms.tokens : 1;
      const { window } = kind;
      const windowMs =
        window.type === 'utcDay' ? terms.msToMidnight : window.type === 'utcMonth' ? terms.msToMonthEnd : window.type === 'fixed' ? window.ms : 0;
      const charged = terms.spends || kind.unit === 'request';
      const extra = this.extras[i]!;
      // Most checks have no extras: the literal without a spread is the cheaper object.
      if (extra === NO_EXTRAS) checks.push(charged ? { scope, subject, limit, max, cost, windowMs, key } : { scope, subject, limit, max, cost, windowMs, key, reportOnly: true });
      else checks.push(charged ? { scope, subject, limit, max, cost, windowMs, key, ...extra } : { scope, subject, limit, max, cost, windowMs, key, ...extra, reportOnly: true });
    }
  }
}

/**
 * The end of the current UTC month, worked out once a month rather than per request. The
 * month's start is kept too: a clock stepped back across the month boundary (NTP) is in an
 * earlier month, whose end is nearer.
 */
class MonthEnd {
  private start = Number.POSITIVE_INFINITY;
  private end = Number.NEGATIVE_INFINITY;

  msLeft(now: number): number {
    if (now >= this.end || now < this.start) {
      this.end = now + msToUtcMonthEnd(now);
      this.start = utcMonthStart(now);
    }
    return this.end - now;
  }
}

/**
 * Turns a request into the list of checks it must pass, from limits prepared once from config.
 *
 * Project limits: an exact `team/project` entry applies if there is one; otherwise a `team/*`
 * entry applies as a per-project default — each project of the team gets its own counters
 * with those limits, never one pool shared by the team. An exact entry replaces the default
 * entirely (its absent limits are unlimited, not inherited from `team/*`).
 */
export class LimitPlan {
  private readonly exactProjects = new Map<string, readonly CompiledLimit[]>();
  private readonly teamDefaults = new Map<string, readonly CompiledLimit[]>();
  /** Principal limit sets come from config objects, so identity caching is bounded by config. */
  private readonly principalLimits = new WeakMap<LimitSet, readonly CompiledLimit[]>();
  /**
   * A static key is the same Principal object on every request, so its checks are built once;
   * a JWT principal is new per request, and its plan goes with it.
   */
  private readonly principalPlans = new WeakMap<Principal, ScopePlan | null>();
  /** team → project → plan (null: no project limit applies), looked up without building a name. */
  private readonly projectPlans = new Map<string, Map<string, ScopePlan | null>>();
  private cachedProjects = 0;
  private readonly monthEnd = new MonthEnd();
  /** team → its plan, built from the LimitSet object it was built from (a changed team gets a new one). */
  private readonly teamPlans = new Map<string, { readonly set: LimitSet; readonly plan: ScopePlan }>();

  constructor(
    config: Pick<Config, 'rateLimits'>,
    private readonly keyPrefix: string,
    private readonly teams: TeamLimitSource = { limitsOf: () => undefined },
    private readonly maxCachedProjects = MAX_CACHED_PROJECTS,
    /** Whether budget checks carry their AlertScope (an event sink is wired and thresholds are set). */
    private readonly alerts = false,
  ) {
    for (const [entry, set] of Object.entries(config.rateLimits.projects)) {
      const compiled = compile(set);
      const [team, project] = entry.split('/') as [string, string];
      // An exact entry with no limits is kept: it replaces the team's default (the project is unlimited).
      if (project === '*') this.teamDefaults.set(team, compiled);
      else this.exactProjects.set(entry, compiled);
    }
  }

  /**
   * The checks for one request; empty when no limit applies (then nothing is asked of a store).
   * `reserve`: its estimated tokens, or both its estimated tokens and cost.
   */
  checksFor(principal: Principal, project: ProjectRef, reserve: number | Reservation, now: number): Check[] {
    const keyPlan = this.principalPlan(principal);
    const projectPlan = this.projectPlan(principal, project);
    const teamPlan = this.teamPlan(principal.team);
    const checks: Check[] = [];
    if (keyPlan === null && projectPlan === null && teamPlan === null) return checks;
    const amounts = typeof reserve === 'number' ? { tokens: reserve, costNanos: 0 } : reserve;
    const terms: RequestTerms = {
      tokens: wholeUnits(amounts.tokens),
      costNanos: wholeUnits(amounts.costNanos),
      spends: amounts.spends ?? true,
      msToMidnight: msToUtcMidnight(now),
      msToMonthEnd: this.monthEnd.msLeft(now),
    };
    keyPlan?.addTo(checks, terms);
    projectPlan?.addTo(checks, terms);
    teamPlan?.addTo(checks, terms);
    return checks;
  }

  /** The record of a team's scope in the store: under the team's hash tag, like its keys' and projects' (one Cluster slot). */
  teamKey(team: string): string {
    return `${this.keyPrefix}{${team}}:team`;
  }

  /**
   * The team scope (SPEC 16) of a team with a record: its limits and its spend counters, one
   * more hash in the same admission script call (no extra Redis command).
   */
  private teamPlan(team: string): ScopePlan | null {
    const set = this.teams.limitsOf(team);
    if (set === undefined) return null;
    const cached = this.teamPlans.get(team);
    if (cached?.set === set) return cached.plan;
    const plan = new ScopePlan('team', `team ${team}`, this.teamKey(team), [...compile(set), ...SPEND_COUNTERS], this.alertScope({ type: 'team', team }));
    this.teamPlans.set(team, { set, plan });
    return plan;
  }

  /**
   * One hash tag per team: a principal only ever reaches its own team's projects (SPEC 6.2,
   * answered 403 before this step), so all of a request's keys share one Cluster slot.
   */
  private baseFor(principal: Principal): string {
    return `${this.keyPrefix}{${principal.team}}:`;
  }

  private principalPlan(principal: Principal): ScopePlan | null {
    let plan = this.principalPlans.get(principal);
    if (plan === undefined) {
      const limits = this.limitsOf(principal.limits);
      const subject = principal.kind === 'key' ? `key ${principal.id}` : `subject ${principal.id}`;
      const alerts = this.alertScope({ type: 'key', team: principal.team, [principal.kind === 'key' ? 'key' : 'subject']: principal.id });
      plan = limits.length === 0 ? null : new ScopePlan('key', subject, `${this.baseFor(principal)}${principal.kind}:${principal.id}`, limits, alerts);
      this.principalPlans.set(principal, plan);
    }
    return plan;
  }

  private projectPlan(principal: Principal, project: ProjectRef): ScopePlan | null {
    let plans = this.projectPlans.get(project.team);
    let plan = plans?.get(project.project);
    if (plan !== undefined) return plan;
    const name = `${project.team}/${project.project}`;
    const limits = this.exactProjects.get(name) ?? this.teamDefaults.get(project.team);
    const alerts = this.alertScope({ type: 'project', team: project.team, project: project.project });
    plan = limits === undefined || limits.length === 0 ? null : new ScopePlan('project', `project ${name}`, `${this.baseFor(principal)}project:${name}`, limits, alerts);
    // Keys carry the principal's team; one of another team is refused before the limits (403).
    if (project.team !== principal.team) return plan;
    if (this.cachedProjects >= this.maxCachedProjects) {
      this.projectPlans.clear();
      this.cachedProjects = 0;
    }
    plans = this.projectPlans.get(project.team);
    if (!plans) {
      plans = new Map();
      this.projectPlans.set(project.team, plans);
    }
    plans.set(project.project, plan);
    this.cachedProjects += 1;
    return plan;
  }

  private alertScope(scope: AlertScope): AlertScope | undefined {
    return this.alerts ? Object.freeze(scope) : undefined;
  }

  private limitsOf(set: LimitSet): readonly CompiledLimit[] {
    let compiled = this.principalLimits.get(set);
    if (!compiled) {
      compiled = compile(set);
      this.principalLimits.set(set, compiled);
    }
    return compiled;
  }
}
