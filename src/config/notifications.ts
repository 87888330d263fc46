import { notificationThresholdsSchema } from './notifications-thresholds.js';
import { z } from 'zod';

/** The event names a webhook may subscribe to (SPEC 24); `src/outbox/event.ts` holds the same list as a type. */
export const NOTIFICATION_TYPES = ['budget.threshold', 'budget.exhausted', 'key.expiring', 'notification.test'] as const;

const positiveInt = z.number().int().positive();
const httpUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });
const sinkName = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, 'must be 1-63 of a-z, 0-9, _ and -, starting with a letter or digit');

/** An exact event name, `<prefix>.*`, or `*`; a pattern that matches no known event is refused. */
const eventPattern = z.string().superRefine((pattern, ctx) => {
  if (!NOTIFICATION_TYPES.some((type) => matchesEvent(pattern, type))) {
    ctx.addIssue({ code: 'custom', message: `"${pattern}" matches no event (events: ${NOTIFICATION_TYPES.join(', ')}; patterns like budget.*)` });
  }
});

export function matchesEvent(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}

const webhookSchema = z
  .object({
    name: sinkName,
    url: httpUrl,
    events: z.array(eventPattern).min(1, 'must name at least one event'),
    format: z.enum(['json', 'slack'], { error: 'must be json or slack' }).default('json'),
    /** HMAC-SHA256 key of X-Tollgate-Signature (json); never logged or shown. */
    secret: z.string().refine((s) => Buffer.byteLength(s) >= 16, 'must be at least 16 bytes').optional(),
  })
  .strict();

const exportSchema = z
  .object({
    name: sinkName,
    url: httpUrl,
    /** Ledger rows per CloudEvents batch. */
    batch: z.number().int().min(1).max(1000).default(100),
    /** Sent with every batch (an ingest token); never shown. */
    headers: z.record(z.string().min(1), z.string()).default({}),
  })
  .strict();

/** `notifications:` (SPEC 24). Keys beyond the SPEC's tune delivery; tests shorten them. */
export const notificationsSchema = z
  .object({
    thresholds: notificationThresholdsSchema,
    webhooks: z.array(webhookSchema).default([]),
    export: z.array(exportSchema).default([]),
    delivery: z
      .object({
        /** How often the deliverer looks for due rows (and renews its lease). */
        pollMs: positiveInt.default(2000),
        /** A lease not renewed for this long is taken over by another instance. */
        leaseMs: positiveInt.default(20_000),
        /** First retry after this; doubled each attempt up to maxBackoffMs. */
        backoffMs: positiveInt.default(5000),
        maxBackoffMs: positiveInt.default(600_000),
        /** Attempts before a delivery is `dead`. */
        maxAttempts: positiveInt.default(12),
        /** A receiver that has not answered within this has failed. */
        timeoutMs: positiveInt.default(10_000),
        /** Ledger rows younger than this are not exported yet (batches of other instances still arriving). */
        exportSettleMs: z.number().int().nonnegative().default(5000),
      })
      .strict()
      .prefault({}),
  })
  .strict()
  .superRefine((n, ctx) => {
    const { pollMs, leaseMs } = n.delivery;
    // The holder renews at each poll: a lease shorter than the poll would lapse between renewals.
    if (pollMs >= leaseMs) ctx.addIssue({ code: 'custom', path: ['delivery', 'pollMs'], message: `must be less than leaseMs (${leaseMs})` });
    // SPEC 24: after a lost lease another instance takes over within 30 s (expiry, then its next poll).
    else if (leaseMs + pollMs > 30_000) ctx.addIssue({ code: 'custom', path: ['delivery', 'leaseMs'], message: 'leaseMs + pollMs must be at most 30000 (another instance takes over within 30 s)' });
    const seen = new Set<string>();
    for (const [list, sinks] of [['webhooks', n.webhooks], ['export', n.export]] as const) {
      sinks.forEach((sink, i) => {
        if (seen.has(sink.name)) ctx.addIssue({ code: 'custom', path: [list, i, 'name'], message: `"${sink.name}" is named twice` });
        seen.add(sink.name);
      });
    }
  })
  .prefault({});
export type NotificationsConfig = z.infer<typeof notificationsSchema>;
export type WebhookConfig = NotificationsConfig['webhooks'][number];
export type ExportConfig = NotificationsConfig['export'][number];
