import type { RequestHandler } from 'express';
import { errors } from '../errors.js';
import { EXPORT_BATCH_TYPE, type Outbox } from '../outbox/index.js';
import { type OutboxDelivery, type OutboxFilter, type OutboxState } from '../store/index.js';
import { adminOf, invalidQuery, narrowedTeam, onlyParams, singleParam, teamScopeOf } from '../admin-requests/index.js';
import { storeFailure } from './audit.js';

export interface NotificationDeps {
  readonly notifications: Outbox;
}

const STATES: readonly OutboxState[] = ['pending', 'delivered', 'failed', 'dead'];
const MAX_LIMIT = 1000;

/** A delivery as the API shows it: snake_case; an event's own fields, an export batch's row range. */
function deliveryView(delivery: OutboxDelivery): Record<string, unknown> {
  return {
    id: delivery.id,
    sink: delivery.sink,
    event_id: delivery.eventId,
    type: delivery.type,
    team: delivery.team,
    state: delivery.state,
    attempts: delivery.attempts,
    next_at: delivery.nextAt,
    created_at: delivery.createdAt,
    updated_at: delivery.updatedAt,
    last_status: delivery.lastStatus,
    last_error: delivery.lastError,
    payload: delivery.payload,
  };
}

function parseFilter(query: Record<string, unknown>): OutboxFilter {
  onlyParams(query, ['state', 'sink', 'type', 'team', 'limit']);
  const state = singleParam(query, 'state');
  if (state !== undefined && !STATES.includes(state as OutboxState)) throw invalidQuery('state', `must be one of ${STATES.join(', ')}`);
  const limitText = singleParam(query, 'limit') ?? '100';
  const limit = Number(limitText);
  if (!/^\d+$/.test(limitText) || limit < 1 || limit > MAX_LIMIT) throw invalidQuery('limit', `must be an integer from 1 to ${MAX_LIMIT}`);
  const filter: OutboxFilter = { limit };
  for (const name of ['sink', 'type', 'team'] as const) {
    const value = singleParam(query, name);
    if (value !== undefined) filter[name] = value;
  }
  if (state !== undefined) filter.state = state as OutboxState;
  return filter;
}


/** `GET /admin/notifications` (SPEC 24): deliveries newest first, filtered; each sink's health. A team-admin sees its team's deliveries. */
export function listNotificationsHandler(deps: NotificationDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const filter = parseFilter(req.query as Record<string, unknown>);
      const team = narrowedTeam(res, filter.team);
      if (team !== undefined) filter.team = team;
      const deliveries = await deps.notifications.list(filter);
      res.json({ object: 'list', delivering: deps.notifications.delivering, sinks: deps.notifications.health(), data: deliveries.map(deliveryView) });
    } catch (err) {
      next(storeFailure(err));
    }
  };
}

/** `POST /admin/notifications/{id}/retry`: due now again, attempts from zero (a dead delivery too). */
export function retryNotificationHandler(deps: NotificationDeps): RequestHandler {
  return async (req, res, next) => {
    try {
      const id = String(req.params.id);
      const scope = teamScopeOf(res);
      const existing = await deps.notifications.get(id);
      if (!existing || (scope !== undefined && existing.team !== scope)) throw errors.notificationNotFound(id);
      // A sent export batch is a record, not a delivery: made due again, no webhook would take it and it would turn dead.
      if (existing.type === EXPORT_BATCH_TYPE) throw errors.exportBatchNotRetryable(id);
      const retried = await deps.notifications.retry(id);
      if (!retried) throw errors.notificationNotFound(id);
      res.json(deliveryView(retried));
    } catch (err) {
      next(storeFailure(err));
    }
  };
}

/** `POST /admin/notifications/test` (admin): a `notification.test` event to every webhook that takes it. */
export function testNotificationHandler(deps: NotificationDeps): RequestHandler {
  return (_req, res) => {
    const id = deps.notifications.sendTest(adminOf(res).id);
    res.locals.auditTarget = id;
    res.status(202).json({ id, type: 'notification.test' });
  };
}
