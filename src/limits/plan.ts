import type { Config, LimitSet } from '../config/index.js';
import type { Principal, ProjectRef } from '../auth/principal.js';
import type { Check, LimitName } from './store.js';

const MINUTE_MS = 60_000;
const DAY_MS = 86_400_000;

/** A limit of a LimitSet, in check order (requests, tokens, daily budget, in flight). */
interface CompiledLimit {
  readonly limit: LimitName;
  readonly max: number;
}

const ORDER: readonly LimitName[] = ['rpm', 'tpm', 'tokensPerDay', 'concurrency'];

function compile(set: LimitSet): readonly CompiledLimit[] {
  const limits: CompiledLimit[] = [];
  for (const limit of ORDER) {
    const max = set[limit];
    if (max !== undefined) limits.push({ limit, max });
  }
  return limits;
}

/** The UTC day a timestamp falls in, as used in daily-budget keys (cached: it changes once a day). */
class UtcDay {
  private dayNumber = -1;
  private label = '';

  labelFor(now: number): string {
    const dayNumber = Math.floor(now / DAY_MS);
    if (dayNumber !== this.dayNumber) {
      this.dayNumber = dayNumber;
      this.label = new Date(dayNumber * DAY_MS).toISOString().slice(0, 10);
    }
    return this.label;
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
  private readonly day = new UtcDay();

  constructor(
    config: Config,
    private readonly keyPrefix: string,
  ) {
    for (const [entry, set] of Object.entries(config.rateLimits.projects)) {
      const compiled = compile(set);
      if (compiled.length === 0) continue;
      const [team, project] = entry.split('/') as [string, string];
      if (project === '*') this.teamDefaults.set(team, compiled);
      else this.exactProjects.set(entry, compiled);
    }
  }

  /** The checks for one request; empty when no limit applies (then nothing is asked of a store). */
  checksFor(principal: Principal, project: ProjectRef, estimatedTokens: number, now: number): Check[] {
    const keyLimits = this.limitsOf(principal.limits);
    const projectName = `${project.team}/${project.project}`;
    const projectLimits = this.exactProjects.get(projectName) ?? this.teamDefaults.get(project.team);
    const checks: Check[] = [];
    if (keyLimits.length === 0 && projectLimits === undefined) return checks;

    // One hash tag per team: a principal only ever reaches its own team's projects (SPEC 6.2,
    // answered 403 before this step), so all of a request's keys share one Cluster slot.
    const base = `${this.keyPrefix}{${principal.team}}:`;
    const tokens = Math.max(0, Math.ceil(estimatedTokens) || 0);
    const dayLabel = this.day.labelFor(now);
    const msToMidnight = DAY_MS - (now % DAY_MS);
    const add = (limits: readonly CompiledLimit[], scope: Check['scope'], id: string, subject: string): void => {
      for (const { limit, max } of limits) {
        const daily = limit === 'tokensPerDay';
        checks.push({
          scope,
          subject,
          limit,
          max,
          cost: limit === 'tpm' || daily ? tokens : 1,
          windowMs: limit === 'concurrency' ? 0 : daily ? msToMidnight : MINUTE_MS,
          key: daily ? `${base}${limit}:${id}:${dayLabel}` : `${base}${limit}:${id}`,
        });
      }
    };
    const principalLabel = principal.kind === 'key' ? `key ${principal.id}` : `subject ${principal.id}`;
    add(keyLimits, 'key', `${principal.kind}:${principal.id}`, principalLabel);
    if (projectLimits) add(projectLimits, 'project', `project:${projectName}`, `project ${projectName}`);
    return checks;
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
