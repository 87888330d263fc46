/**
 * Notifications (SPEC 24): the durable outbox behind `EventSink`, its deliverer (one instance at
 * a time, under a lease), webhook formats and the usage export as CloudEvents.
 */
export type { EventSink, NotificationEvent, NotificationType } from './event.js';
export { Outbox, type OutboxOptions, type SinkHealth } from './outbox.js';
export { EXPORT_BATCH_TYPE } from './deliverer.js';
export { exportBody, signature, slackText, USAGE_EVENT_TYPE, CLOUDEVENTS_BATCH } from './formats.js';
export { EXPORT_WORKER_NICE_STEPS, ExportWorker, type ExportBatch } from './export-worker.js';
export { backoffAfter } from './backoff.js';
