import { DAY_MS, msToUtcMonthEnd, utcMonthStart } from '../calendar.js';
import { limitKind } from '../limit-kinds/index.js';
import { nanosToAmount } from '../money.js';
import type { EventSink, NotificationEvent } from '../outbox/index.js';
import type { AlertScope, Check } from './store.js';

/** Half a day: how far a window end read on one clock may be from the calendar boundary it stands for. */
const SKEW_MS = DAY_MS / 2;

/**
 * The calendar window a budget counter's window end stands for. A window opened by a first
 * charge ends at "store time + what the gateway's clock said was left of the day or month", a
 * few ms off the boundary; the event names the calendar day or month, so every instance and
 * both stores name the same window (and the event id is the same).
 */
function calendarWindow(limit: Check['limit'], windowEnd: number): { start: number; end: number } {
  const inside = windowEnd - SKEW_MS;
  if (limitKind(limit).window.type === 'utcMonth') {
    const start = utcMonthStart(inside);
    return { start, end: start + msToUtcMonthEnd(start) };
  }
  const start = inside - (inside % DAY_MS);
  return { start, end: start + DAY_MS };
}

/** `key/team-a/ci-bot`, `project/team-a/prod`, `team/team-a`: the scope as the event id names it. */
function scopePath(scope: AlertScope): string {
  if (scope.type === 'team') return `team/${scope.team}`;
  if (scope.type === 'project') return `project/${scope.team}/${scope.project}`;
  return scope.key !== undefined ? `key/${scope.team}/${scope.key}` : `subject/${scope.team}/${scope.subject}`;
}

/**
 * Budget alerts (SPEC 24): turns a counter's move from `before` to `after` into the events of the
 * thresholds it crossed. Which move crosses is decided where the spend is counted — the Redis
 * script's reply, or the memory store — so among all instances exactly one charge moves a
 * counter from below t·budget to at or above it; the event id (scope, limit, calendar window,
 * threshold) is the same wherever it is decided, so a repeat (a refund and a new charge
 * crossing again) is stored and delivered once.
 */
export class BudgetAlerts {
  constructor(
    private readonly sink: EventSink,
    /** Ascending fractions in (0, 1]. */
    private readonly thresholds: readonly number[],
    /** What cost budgets are counted in (the price currency). */
    private readonly currency: string,
    private readonly now: () => number = Date.now,
  ) {}

  /** Spend on `check`'s counter moved from `before` to `after` in the window ending at `windowEnd`. */
  readonly spent = (check: Check, before: number, after: number, windowEnd: number): void => {
    const scope = check.alerts;
    if (scope === undefined || after <= before || windowEnd <= 0) return;
    for (const threshold of this.thresholds) {
      const line = threshold * check.max;
      if (before < line && after >= line) this.sink.publish(this.event(check, scope, threshold, after, windowEnd));
    }
  };

  private event(check: Check, scope: AlertScope, threshold: number, spent: number, windowEnd: number): NotificationEvent {
    const window = calendarWindow(check.limit, windowEnd);
    const start = new Date(window.start).toISOString();
    const exhausted = threshold >= 1;
    const money = limitKind(check.limit).unit === 'cost';
    const amount = (units: number): number => (money ? nanosToAmount(units) : units);
    return {
      id: `budget/${scopePath(scope)}/${check.limit}/${start.slice(0, 10)}/${threshold}`,
      type: exhausted ? 'budget.exhausted' : 'budget.threshold',
      time: new Date(this.now()).toISOString(),
      team: scope.team,
      data: {
        scope,
        limit: check.limit,
        window: { start, end: new Date(window.end).toISOString() },
        budget: amount(check.max),
        spent: amount(spent),
        unit: money ? this.currency : 'tokens',
        threshold,
        soft: check.soft === true,
      },
    };
  }
}
