import { createHmac } from 'node:crypto';
import { CloudEvent } from 'cloudevents';
import type { ExportConfig, WebhookConfig } from '../config/index.js';
import { ledgerRowView } from '../metering/index.js';
import type { LedgerRow } from '../store/index.js';
import { BUDGET_EVENT_TYPES, type NotificationEvent } from './event.js';
import type { Outgoing } from './send.js';

/** The CloudEvents type of a usage record (SPEC 24). */
export const USAGE_EVENT_TYPE = 'io.tollgate.usage.v1';
export const CLOUDEVENTS_BATCH = 'application/cloudevents-batch+json';

/** `t=<unix>,v1=<hex HMAC-SHA256 of "<t>.<body>">` (SPEC 24): what a receiver checks with the shared secret. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac('sha256', secret).update(`${unixSeconds}.${body}`).digest('hex');
  return `t=${unixSeconds},v1=${mac}`;
}

/** `project team-a/prod`, `key team-a/ci-bot`, `team team-a`: a budget event's scope as a person reads it. */
function scopeText(scope: unknown): string {
  if (typeof scope !== 'object' || scope === null) return 'a budget';
  const { type, team, project, key, subject } = scope as Record<string, unknown>;
  const who = [team, project ?? key ?? subject].filter((part) => typeof part === 'string').join('/');
  return `${String(type)} ${who}`;
}

/**
 * A sentence for a chat channel (`format: slack`), from the event's own fields: budget events
 * (SPEC 24) say whose budget, how far and how much; key notices which key and when; anything else
 * its message or its data.
 */
export function slackText(event: NotificationEvent): string {
  const data = event.data;
  if (BUDGET_EVENT_TYPES.includes(event.type)) {
    const percent = typeof data.threshold === 'number' ? `${Math.round(data.threshold * 100)}%` : 'its threshold';
    const soft = data.soft === true ? ' (soft: still serving)' : '';
    return `Tollgate ${event.type}: ${scopeText(data.scope)} reached ${percent} of its ${String(data.limit)} budget (${String(data.spent)} of ${String(data.budget)} ${String(data.unit)})${soft}`;
  }
  if (event.type === 'key.expiring') return `Tollgate key.expiring: key ${String(data.key)} of team ${String(data.team)} expires at ${String(data.expiresAt)} (in ${String(data.days)} days)`;
  return `Tollgate ${event.type}: ${typeof data.message === 'string' ? data.message : JSON.stringify(data)}`;
}

/** The request a webhook gets for one event; signed (json with a secret) at the moment it is sent. */
export function webhookRequest(sink: WebhookConfig, event: NotificationEvent, nowMs: number): Outgoing {
  const url = new URL(sink.url);
  if (sink.format === 'slack') return { url, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ text: slackText(event) }) };
  const body = JSON.stringify({ id: event.id, type: event.type, time: event.time, data: event.data });
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (sink.secret !== undefined) headers['x-tollgate-signature'] = signature(sink.secret, body, Math.floor(nowMs / 1000));
  return { url, headers, body };
}

/** The attributes every usage event shares: what the export worker is given to build the same events. */
export function usageEnvelope(source: string): { readonly specversion: '1.0'; readonly type: string; readonly source: string; readonly datacontenttype: string } {
  return { specversion: '1.0', type: USAGE_EVENT_TYPE, source, datacontenttype: 'application/json' };
}

/**
 * One ledger row as a CloudEvent: id the row's, subject `<team>/<project>`, data the row as
 * /admin/usage/requests shows it. `strict` runs the SDK's validation (a few µs an event): a batch
 * validates its first event, the rest are built from the same typed columns.
 */
export function usageEvent(row: LedgerRow, source: string, strict = true): CloudEvent<Record<string, unknown>> {
  return new CloudEvent({ ...usageEnvelope(source), id: row.id, subject: `${row.team}/${row.project}`, time: row.at, data: ledgerRowView(row) }, strict);
}

/** A batch's body in OpenMeter's ingest shape: a JSON array of structured CloudEvents. */
export function exportBody(rows: readonly LedgerRow[], source: string): string {
  return JSON.stringify(rows.map((row, index) => usageEvent(row, source, index === 0)));
}

/** The request that carries an export batch's body to its sink. */
export function exportRequest(sink: ExportConfig, body: string): Outgoing {
  return { url: new URL(sink.url), headers: { ...sink.headers, 'content-type': CLOUDEVENTS_BATCH }, body };
}
