import type { Kysely } from 'kysely';
import { dayRange } from '../../calendar.js';
import type { AuditEntry, AuditQuery } from '../core/durable-store.js';
import { auditEntryFrom, isoInstant } from '../core/rows.js';
import type { Database } from '../core/schema.js';

export async function insertAudit(db: Kysely<Database>, entry: AuditEntry): Promise<void> {
  await db
    .insertInto('audit_log')
    .values({
      at: isoInstant(entry.at),
      actor: entry.actor,
      actor_role: entry.actorRole ?? null,
      actor_email: entry.actorEmail ?? null,
      action: entry.action,
      target: entry.target,
      result: entry.result,
      request_id: entry.requestId,
    })
    .execute();
}

/** Entries of the inclusive UTC days, oldest first (entries of the same instant in insertion order). */
export async function selectAudit(db: Kysely<Database>, query: AuditQuery): Promise<AuditEntry[]> {
  const { start, end } = dayRange(query.from, query.to);
  const rows = await db
    .selectFrom('audit_log')
    .selectAll()
    .where('at', '>=', start)
    .where('at', '<', end)
    .$if(query.actor !== undefined, (q) => q.where('actor', '=', query.actor!))
    .$if(query.action !== undefined, (q) => q.where('action', '=', query.action!))
    .orderBy('at')
    .orderBy('id')
    .execute();
  return rows.map(auditEntryFrom);
}
