/**
 * The contract between what decides that something happened (budget thresholds, expiring keys,
 * a test send) and the durable outbox that delivers it (SPEC 24).
 *
 * `id` is stable: the same decision always produces the same id, so an event published twice
 * (by two instances, or again after a restart) is stored and delivered once per sink.
 */
export type NotificationType = 'budget.threshold' | 'budget.exhausted' | 'key.expiring' | 'notification.test';

/** The budget alerts' events (SPEC 24): kept past their window once delivered, and told in words of a budget. */
export const BUDGET_EVENT_TYPES: readonly NotificationType[] = ['budget.threshold', 'budget.exhausted'];

export interface NotificationEvent {
  readonly id: string;
  readonly type: NotificationType;
  /** ISO 8601, when the decision was made. */
  readonly time: string;
  /** The team the event concerns, when it concerns one: a team-admin sees its team's events. */
  readonly team?: string;
  readonly data: Readonly<Record<string, unknown>>;
}

/**
 * Where events go. `publish` never blocks the caller and never throws: the outbox stores the
 * event durably (idempotent by `id`) and delivers it to every sink whose `events` match.
 */
export interface EventSink {
  publish(event: NotificationEvent): void;
  /**
   * An event that may have been decided and lost: its budget crossed a threshold before this
   * process heard of it, and the process that decided it may have died before storing it. The
   * outbox stores it unless it holds the id already; a sink without this method ignores such events.
   */
  recover?(event: NotificationEvent): void;
}
