import type { Selectable } from 'kysely';
import type { AdminKeyRecord, AdminRoleName, ApiKeyRecord, AuditEntry, TeamRecord, LedgerRow, ResourceKind, ResourceRecord } from './durable-store.js';
import type { AdminKeysTable, ApiKeysTable, AuditLogTable, TeamsTable, LedgerTable, ResourcesTable } from './schema.js';

/** An instant as the store writes it: ISO, UTC, milliseconds, `Z` — sortable as text. */
export function isoInstant(value: string | Date): string {
  const date = value instanceof Date ? value : new Date(value);
  if (Number.isNaN(date.getTime())) throw new RangeError(`not a valid instant: "${String(value)}"`);
  return date.toISOString();
}

export function isoOrNull(value: string | Date | null): string | null {
  return value === null ? null : isoInstant(value);
}

/** pg parses jsonb; SQLite hands back the text. */
function fromJson<T>(value: unknown): T {
  return (typeof value === 'string' ? JSON.parse(value) : value) as T;
}

/** pg answers int8 and sums as strings; SQLite as numbers. */
export function toNumber(value: number | string | bigint | null): number {
  return value === null ? 0 : Number(value);
}

export function keyRecordFrom(row: Selectable<ApiKeysTable>): ApiKeyRecord {
  return {
    id: row.id,
    team: row.team,
    projects: fromJson<string[]>(row.projects),
    defaultProject: row.default_project,
    limits: fromJson<Record<string, number | boolean>>(row.limits),
    models: row.models === null ? null : fromJson<string[]>(row.models),
    description: row.description,
    createdAt: isoInstant(row.created_at),
    expiresAt: isoOrNull(row.expires_at),
    disabled: Boolean(row.disabled),
    revokedAt: isoOrNull(row.revoked_at),
  };
}

export function resourceRecordFrom(row: Selectable<ResourcesTable>): ResourceRecord {
  return {
    kind: row.kind as ResourceKind,
    id: row.id,
    team: row.team,
    project: row.project,
    artifact: row.artifact,
    createdAt: isoInstant(row.created_at),
  };
}

export function auditEntryFrom(row: Selectable<AuditLogTable>): AuditEntry {
  return {
    at: isoInstant(row.at),
    actor: row.actor,
    ...(row.actor_role === null ? {} : { actorRole: row.actor_role }),
    ...(row.actor_email === null ? {} : { actorEmail: row.actor_email }),
    action: row.action,
    target: row.target,
    result: row.result,
    requestId: row.request_id,
  };
}

export function ledgerRowFrom(row: Selectable<LedgerTable>): LedgerRow {
  return {
    id: row.id,
    requestId: row.request_id,
    at: isoInstant(row.at),
    team: row.team,
    project: row.project,
    keyId: row.key_id,
    route: row.route,
    method: row.method,
    status: row.status,
    model: row.model,
    promptTokens: row.prompt_tokens,
    completionTokens: row.completion_tokens,
    totalTokens: row.total_tokens,
    costNanos: toNumber(row.cost_nanos),
    estimated: Boolean(row.estimated),
    requestBytes: toNumber(row.request_bytes),
    durationMs: row.duration_ms,
    traceId: row.trace_id,
    requestedModel: row.requested_model,
    fallbackFrom: row.fallback_from,
  };
}

export function teamRecordFrom(row: Selectable<TeamsTable>): TeamRecord {
  return {
    id: row.id,
    description: row.description,
    limits: fromJson<Record<string, number | boolean>>(row.limits),
    models: row.models === null ? null : fromJson<string[]>(row.models),
    disabled: Boolean(row.disabled),
    createdAt: isoInstant(row.created_at),
  };
}

export function adminKeyRecordFrom(row: Selectable<AdminKeysTable>): AdminKeyRecord {
  return {
    id: row.id,
    role: row.role as AdminRoleName,
    team: row.team,
    description: row.description,
    createdAt: isoInstant(row.created_at),
    expiresAt: isoOrNull(row.expires_at),
    disabled: Boolean(row.disabled),
    revokedAt: isoOrNull(row.revoked_at),
  };
}
