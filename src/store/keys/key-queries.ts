import type { Kysely, Updateable } from 'kysely';
import type { SqlDialect } from '../core/dialect.js';
import type { ApiKeyRecord, KeyPatch, KeySecret, StoredKey } from '../core/durable-store.js';
import { KeyIdTakenError, SecretDigestTakenError } from '../core/errors.js';
import { isoInstant, isoOrNull, keyRecordFrom } from '../core/rows.js';
import type { ApiKeysTable, Database } from '../core/schema.js';

/** Inserts a key and its current secret (inside a transaction: a taken digest undoes the key). */
export async function insertKey(trx: Kysely<Database>, dialect: SqlDialect, record: ApiKeyRecord, sha256: string): Promise<ApiKeyRecord> {
  // Revoked keys keep their row (revoked_at set), so "on conflict do nothing" also refuses a revoked id.
  const row = await trx
    .insertInto('api_keys')
    .values({
      id: record.id,
      team: record.team,
      projects: JSON.stringify(record.projects),
      default_project: record.defaultProject,
      limits: JSON.stringify(record.limits),
      models: record.models === null || record.models === undefined ? null : JSON.stringify(record.models),
      description: record.description,
      created_at: isoInstant(record.createdAt),
      expires_at: isoOrNull(record.expiresAt),
      disabled: dialect.flag(record.disabled),
      revoked_at: isoOrNull(record.revokedAt),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new KeyIdTakenError(record.id);
  await insertCurrentSecret(trx, record.id, sha256);
  return keyRecordFrom(row);
}

async function insertCurrentSecret(trx: Kysely<Database>, keyId: string, sha256: string): Promise<void> {
  const inserted = await trx
    .insertInto('key_secrets')
    .values({ sha256, key_id: keyId, valid_until: null })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('sha256')
    .executeTakeFirst();
  if (!inserted) throw new SecretDigestTakenError();
}

export async function selectKey(db: Kysely<Database>, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  return row && keyRecordFrom(row);
}

export async function selectKeys(db: Kysely<Database>, team: string | undefined): Promise<ApiKeyRecord[]> {
  const rows = await db
    .selectFrom('api_keys')
    .selectAll()
    .$if(team !== undefined, (q) => q.where('team', '=', team!))
    .orderBy('created_at')
    .orderBy('id')
    .execute();
  return rows.map(keyRecordFrom);
}

export async function patchKey(trx: Kysely<Database>, dialect: SqlDialect, id: string, patch: KeyPatch): Promise<ApiKeyRecord | undefined> {
  const set: Updateable<ApiKeysTable> = {};
  if (patch.projects !== undefined) set.projects = JSON.stringify(patch.projects);
  if (patch.defaultProject !== undefined) set.default_project = patch.defaultProject;
  if (patch.limits !== undefined) set.limits = JSON.stringify(patch.limits);
  if (patch.models !== undefined) set.models = patch.models === null ? null : JSON.stringify(patch.models);
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.expiresAt !== undefined) set.expires_at = isoOrNull(patch.expiresAt);
  if (patch.disabled !== undefined) set.disabled = dialect.flag(patch.disabled);
  if (Object.keys(set).length === 0) {
    const current = await selectKey(trx, id);
    return current?.revokedAt === null ? current : undefined;
  }
  const row = await trx.updateTable('api_keys').set(set).where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
  return row && keyRecordFrom(row);
}

/** A live key, locked against a concurrent rotation or revocation on PostgreSQL (SQLite's write lock already is). */
async function selectLiveKeyForUpdate(trx: Kysely<Database>, dialect: SqlDialect, id: string): Promise<ApiKeyRecord | undefined> {
  const row = await trx
    .selectFrom('api_keys')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .$if(dialect.name === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  return row && keyRecordFrom(row);
}

export async function rotateSecret(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  id: string,
  newSha256: string,
  previousValidUntil: string | null,
): Promise<ApiKeyRecord | undefined> {
  const record = await selectLiveKeyForUpdate(trx, dialect, id);
  if (!record) return undefined;
  const now = new Date().toISOString();
  // Secrets whose overlap is over are dead weight: drop them while here.
  await trx.deleteFrom('key_secrets').where('key_id', '=', id).where('valid_until', '<=', now).execute();
  const until = isoOrNull(previousValidUntil);
  if (until !== null && until > now) {
    await trx.updateTable('key_secrets').set({ valid_until: until }).where('key_id', '=', id).where('valid_until', 'is', null).execute();
  } else {
    await trx.deleteFrom('key_secrets').where('key_id', '=', id).where('valid_until', 'is', null).execute();
  }
  await insertCurrentSecret(trx, id, newSha256);
  return record;
}

/**
 * Marks revoked for good. The row stays, so the id is never reused; so do its secrets' digests,
 * so a client that presents a revoked secret is told it was revoked (not that it is unknown),
 * and no digest can ever come back as another key's.
 */
export async function markRevoked(trx: Kysely<Database>, id: string): Promise<boolean> {
  const revoked = await trx
    .updateTable('api_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return revoked !== undefined;
}

/**
 * Keys with their secrets still valid, in one statement (one snapshot: a key is never seen
 * with half a rotation). Revoked keys come with the secrets they had: the caller refuses them.
 */
export async function selectStoredKeys(db: Kysely<Database>, id?: string): Promise<StoredKey[]> {
  const now = new Date().toISOString();
  const rows = await db
    .selectFrom('api_keys as k')
    .leftJoin('key_secrets as s', (join) =>
      join.onRef('s.key_id', '=', 'k.id').on((eb) => eb.or([eb('s.valid_until', 'is', null), eb('s.valid_until', '>', now)])),
    )
    .selectAll('k')
    .select(['s.sha256', 's.valid_until'])
    .$if(id !== undefined, (q) => q.where('k.id', '=', id!))
    .orderBy('k.created_at')
    .orderBy('k.id')
    .execute();
  const keys = new Map<string, StoredKey>();
  for (const row of rows) {
    let stored = keys.get(row.id);
    if (!stored) keys.set(row.id, (stored = { record: keyRecordFrom(row), secrets: [] }));
    if (row.sha256 !== null) stored.secrets.push(secretFrom(row.sha256, row.valid_until));
  }
  for (const stored of keys.values()) stored.secrets.sort(currentFirstThenLatest);
  return [...keys.values()];
}

/** The current secret, then the rotated ones from the latest expiry (null sorts differently in each database). */
function currentFirstThenLatest(a: KeySecret, b: KeySecret): number {
  if (a.validUntil === b.validUntil) return 0;
  if (a.validUntil === null) return -1;
  if (b.validUntil === null) return 1;
  return a.validUntil < b.validUntil ? 1 : -1;
}

function secretFrom(sha256: string, validUntil: string | Date | null): KeySecret {
  return { sha256, validUntil: isoOrNull(validUntil) };
}
