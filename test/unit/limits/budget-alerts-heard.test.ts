import { describe, expect, it } from 'vitest';
import { BudgetAlerts, type Check, type NotificationEvent } from '../../../src/limits/index.js';

/**
 * SPEC 24: what one process hands its event sink as a budget's counter moves — a threshold this
 * charge crosses is published (decided here); one already passed, which this process has not
 * heard of in the window, is handed to `recover` once (its deciding process may have died before
 * storing it).
 */
const DAY_MS = 86_400_000;
const END = Date.UTC(2026, 10, 30);
const check: Check = {
  scope: 'key',
  subject: 'key ci-bot',
  limit: 'costPerDay',
  max: 100,
  cost: 1,
  windowMs: DAY_MS,
  key: 'alerts:{team-a}:key:ci-bot',
  alerts: { type: 'key', team: 'team-a', key: 'ci-bot' },
};

function alertsWithSink(): { alerts: BudgetAlerts; seen: string[] } {
  const seen: string[] = [];
  const sink = {
    publish: (event: NotificationEvent) => void seen.push(`publish ${event.data.threshold as number}`),
    recover: (event: NotificationEvent) => void seen.push(`recover ${event.data.threshold as number}`),
  };
  return { alerts: new BudgetAlerts(sink, [0.5, 0.8, 1], 'USD', () => END - DAY_MS / 2), seen };
}

describe('budget alerts one process hears', () => {
  it('publishes the thresholds a charge crosses, and nothing below the first', () => {
    const { alerts, seen } = alertsWithSink();
    alerts.spent(check, 10, 40, END);
    alerts.spent(check, 40, 85, END);
    expect(seen).toEqual(['publish 0.5', 'publish 0.8']);
  });

  it('recovers each threshold passed before it heard, once a window, then publishes the next crossing', () => {
    const { alerts, seen } = alertsWithSink();
    alerts.spent(check, 85, 86, END);
    alerts.spent(check, 86, 87, END);
    alerts.spent(check, 87, 101, END);
    expect(seen).toEqual(['recover 0.5', 'recover 0.8', 'publish 1']);
    // The next day's window starts from nothing.
    alerts.spent(check, 60, 61, END + DAY_MS);
    expect(seen.slice(3)).toEqual(['recover 0.5']);
  });

  it('hears nothing of refunds', () => {
    const { alerts, seen } = alertsWithSink();
    alerts.spent(check, 90, 70, END);
    expect(seen).toEqual([]);
  });
});
