import type { RequestHandler } from 'express';
import type { KeyAdmin } from '../keys/index.js';
import type { Logger } from '../observability/index.js';
import { BatchWriter, DatabaseUnavailableError, type AuditEntry, type StoreHandle } from '../store/index.js';
import { errors, type GatewayError } from '../errors.js';
import { dayRange, onlyParams, singleParam, teamScopeOf } from '../admin-requests/index.js';

/** What an admin write or a reload did, as the audit log records it (SPEC 12.3). */
export type AuditAction =
  | 'key.create'
  | 'key.update'
  | 'key.rotate'
  | 'key.revoke'
  | 'team.create'
  | 'team.update'
  | 'team.delete'
  | 'admin_key.create'
  | 'admin_key.update'
  | 'admin_key.rotate'
  | 'admin_key.revoke'
  | 'resource.assign'
  | 'resource.release'
  | 'config.reload'
  | 'notification.retry'
  | 'notification.test'
  | 'session.create'
  | 'session.delete';

/**
 * The audit log's writer: entries go to the durable store off the request path, and wait in a
 * bounded buffer (retried) while the database is away, so an outage does not lose them. An
 * entry never holds a secret: targets are key ids, resource ids or `config`.
 */
export class AuditTrail {
  private readonly writer: BatchWriter<AuditEntry>;

  constructor(handle: StoreHandle, logger: Logger, onDatabaseError: () => void) {
    this.writer = new BatchWriter<AuditEntry>({
      write: async (batch) => {
        const store = handle.require();
        for (const entry of batch) await store.appendAudit(entry);
      },
      maxBuffered: 10_000,
      onDropped: (entry, reason) => logger.error({ audit: entry, reason }, 'audit entry dropped: the database was away too long'),
      onWriteError: onDatabaseError,
    });
  }

  /** `actorRole`: the admin role of the actor (SPEC 16); absent for a SIGHUP reload. */
  record(actor: string, action: AuditAction, target: string, result: string, requestId: string, actorRole?: string, actorEmail?: string): void {
    this.writer.add({
      at: new Date().toISOString(),
      actor,
      ...(actorRole === undefined ? {} : { actorRole }),
      ...(actorEmail === undefined ? {} : { actorEmail }),
      action,
      target,
      result,
      requestId,
    });
  }

  /** Writes what is buffered, until `deadline` (reads wait on it: a write is visible to the next read). */
  flush(deadline?: number): Promise<void> {
    return this.writer.flush(deadline);
  }

  close(deadline: number): Promise<void> {
    return this.writer.close(deadline);
  }
}

/**
 * Records an admin write in the audit log once its answer is sent: who, what, on which target,
 * and `ok` or the error code it was answered with. The app puts it in front of every write of
 * the admin route table, so no write is left out, failed ones included. The target is what the
 * handler names in `res.locals.auditTarget`, else the `:id` of the path.
 */
export function audited(trail: AuditTrail, action: AuditAction): RequestHandler {
  return (req, res, next) => {
    // Read now: once a handler fails, the error middleware runs with the path's parameters gone.
    const pathId = req.params.id as string | undefined;
    res.once('finish', () => {
      const target = (res.locals.auditTarget as string | undefined) ?? pathId ?? '';
      const result = res.statusCode < 400 ? 'ok' : ((res.locals.errorCode as string | undefined) ?? String(res.statusCode));
      const admin = res.locals.admin as { id: string; role: string; email?: string } | undefined;
      trail.record(admin?.id ?? '', action, target, result, String(res.getHeader('x-request-id') ?? ''), admin?.role, admin?.email);
    });
    next();
  };
}

/** Longest range one audit query may cover, in days. */
const MAX_AUDIT_DAYS = 366;

/** `GET /admin/audit?from=&to=[&actor=][&action=]` → `{"object":"list","data":[...]}` in time order. */
export function listAuditHandler({ handle, trail, keys }: { readonly handle: StoreHandle; readonly trail: AuditTrail; readonly keys: KeyAdmin }): RequestHandler {
  return async (req, res, next) => {
    try {
      const query = req.query as Record<string, unknown>;
      onlyParams(query, ['from', 'to', 'actor', 'action']);
      const range = dayRange(query, MAX_AUDIT_DAYS);
      const actor = singleParam(query, 'actor');
      const action = singleParam(query, 'action');
      await trail.flush(Date.now() + 1000);
      const entries = await handle.require().listAudit({ ...range, ...(actor === undefined ? {} : { actor }), ...(action === undefined ? {} : { action }) });
      res.json({ object: 'list', data: entriesAbout(entries, teamScopeOf(res), keys) });
    } catch (err) {
      next(storeFailure(err));
    }
  };
}

/**
 * A team-admin's view of the audit log: the entries about its team — the team itself and its
 * keys as they are now (a revoked key's entries are no longer shown).
 */
function entriesAbout(entries: AuditEntry[], team: string | undefined, keys: KeyAdmin): AuditEntry[] {
  if (team === undefined) return entries;
  const targets = new Set([team, ...keys.list(team).map((key) => key.id)]);
  return entries.filter((e) => targets.has(e.target));
}

export function databaseUnavailable(): GatewayError {
  return errors.databaseUnavailable();
}

/** A store call's failure as the client sees it: the database being away is the 503 database_unavailable; anything else as it is. */
export function storeFailure(err: unknown): unknown {
  return err instanceof DatabaseUnavailableError ? databaseUnavailable() : err;
}
