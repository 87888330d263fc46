import { DAY_MS, msToUtcMonthEnd, utcMonthStart } from '../calendar.js';
import { limitKind, type CounterName } from '../limit-kinds/index.js';
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
 *
 * A crossing is decided once, but its event reaches the outbox table a few ms later (the batch
 * writer): a process killed in between would lose it for good. So a process that settles a
 * counter already past a threshold it has not seen crossed in this window hands that event to
 * the sink's `recover` — once per process, counter, window and threshold: after a restart (or on
 * another instance) the first charge of such a budget stores what was lost, and the outbox's
 * unique id (budget rows outlive their window) keeps what was stored from being sent twice.
 */
export class BudgetAlerts {
  /** By scope record and counter: the window this process last heard of, and how many thresholds (from the lowest) it has published or recovered there. */
  private readonly heard = new Map<string, Map<CounterName, { windowEnd: number; count: number }>>();

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
    const { thresholds } = this;
    if (scope === undefined || after <= before || windowEnd <= 0 || after < thresholds[0]! * check.max) return;
    const mark = this.markOf(check, windowEnd);
    for (; mark.count < thresholds.length; mark.count++) {
      const threshold = thresholds[mark.count]!;
      const line = threshold * check.max;
      if (after < line) return;
      // Crossed by this charge: decided here. Past before it: decided elsewhere or earlier, maybe lost.
      if (before < line) this.sink.publish(this.event(check, scope, threshold, after, windowEnd));
      else this.sink.recover?.(this.event(check, scope, threshold, after, windowEnd));
    }
  };

  /** What this process has heard of the counter's window (a new window starts from nothing). */
  private markOf(check: Check, windowEnd: number): { windowEnd: number; count: number } {
    let counters = this.heard.get(check.key);
    if (counters === undefined) this.heard.set(check.key, (counters = new Map()));
    let mark = counters.get(check.limit);
    if (mark === undefined || Math.abs(mark.windowEnd - windowEnd) > SKEW_MS) counters.set(check.limit, (mark = { windowEnd, count: 0 }));
    return mark;
  }

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
