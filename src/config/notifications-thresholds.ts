import { z } from 'zod';

/**
 * `notifications.thresholds` (SPEC 24): the fractions of every cost and token budget at which an
 * alert fires, each in (0, 1]; 1.0 is reported as `budget.exhausted`, the others as
 * `budget.threshold`. The rest of the `notifications` section (webhooks, export) is the outbox's.
 */
export const notificationThresholdsSchema = z
  .array(z.number().gt(0, 'must be in (0, 1]').lte(1, 'must be in (0, 1]'))
  .max(10)
  .refine((list) => new Set(list).size === list.length, 'must not repeat a threshold')
  .transform((list) => [...list].sort((a, b) => a - b))
  .default([0.8, 1.0]);
