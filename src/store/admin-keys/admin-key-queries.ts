import type { Kysely, Updateable } from 'kysely';
import type { SqlDialect } from '../core/dialect.js';
import type { AdminKeyPatch, AdminKeyRecord, KeySecret, StoredAdminKey } from '../core/durable-store.js';
import { KeyIdTakenError, SecretDigestTakenError } from '../core/errors.js';
import { adminKeyRecordFrom, isoInstant, isoOrNull } from '../core/rows.js';
import type { AdminKeysTable, Database } from '../core/schema.js';

/** Admin keys made at runtime (SPEC 16): the same life as API keys (key-queries.ts), in tables of their own. */
export async function insertAdminKey(trx: Kysely<Database>, dialect: SqlDialect, record: AdminKeyRecord, sha256: string): Promise<AdminKeyRecord> {
  const row = await trx
    .insertInto('admin_keys')
    .values({
      id: record.id,
      role: record.role,
      team: record.team,
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
  return adminKeyRecordFrom(row);
}

async function insertCurrentSecret(trx: Kysely<Database>, keyId: string, sha256: string): Promise<void> {
  const inserted = await trx
    .insertInto('admin_key_secrets')
    .values({ sha256, key_id: keyId, valid_until: null })
    .onConflict((oc) => oc.column('sha256').doNothing())
    .returning('sha256')
    .executeTakeFirst();
  if (!inserted) throw new SecretDigestTakenError();
}

export async function patchAdminKey(trx: Kysely<Database>, dialect: SqlDialect, id: string, patch: AdminKeyPatch): Promise<AdminKeyRecord | undefined> {
  const set: Updateable<AdminKeysTable> = {};
  if (patch.role !== undefined) set.role = patch.role;
  if (patch.team !== undefined) set.team = patch.team;
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.expiresAt !== undefined) set.expires_at = isoOrNull(patch.expiresAt);
  if (patch.disabled !== undefined) set.disabled = dialect.flag(patch.disabled);
  if (Object.keys(set).length === 0) {
    const current = await trx.selectFrom('admin_keys').selectAll().where('id', '=', id).where('revoked_at', 'is', null).executeTakeFirst();
    return current && adminKeyRecordFrom(current);
  }
  const row = await trx.updateTable('admin_keys').set(set).where('id', '=', id).where('revoked_at', 'is', null).returningAll().executeTakeFirst();
  return row && adminKeyRecordFrom(row);
}

export async function rotateAdminSecret(
  trx: Kysely<Database>,
  dialect: SqlDialect,
  id: string,
  newSha256: string,
  previousValidUntil: string | null,
): Promise<AdminKeyRecord | undefined> {
  const row = await trx
    .selectFrom('admin_keys')
    .selectAll()
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .$if(dialect.name === 'postgres', (q) => q.forUpdate())
    .executeTakeFirst();
  if (!row) return undefined;
  const now = new Date().toISOString();
  await trx.deleteFrom('admin_key_secrets').where('key_id', '=', id).where('valid_until', '<=', now).execute();
  const until = isoOrNull(previousValidUntil);
  if (until !== null && until > now) {
    await trx.updateTable('admin_key_secrets').set({ valid_until: until }).where('key_id', '=', id).where('valid_until', 'is', null).execute();
  } else {
    await trx.deleteFrom('admin_key_secrets').where('key_id', '=', id).where('valid_until', 'is', null).execute();
  }
  await insertCurrentSecret(trx, id, newSha256);
  return adminKeyRecordFrom(row);
}

export async function markAdminKeyRevoked(trx: Kysely<Database>, id: string): Promise<boolean> {
  const revoked = await trx
    .updateTable('admin_keys')
    .set({ revoked_at: new Date().toISOString() })
    .where('id', '=', id)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return revoked !== undefined;
}

/** Admin keys with their secrets still valid, in one statement (see selectStoredKeys). */
export async function selectStoredAdminKeys(db: Kysely<Database>, id?: string): Promise<StoredAdminKey[]> {
  const now = new Date().toISOString();
  const rows = await db
    .selectFrom('admin_keys as k')
    .leftJoin('admin_key_secrets as s', (join) =>
      join.onRef('s.key_id', '=', 'k.id').on((eb) => eb.or([eb('s.valid_until', 'is', null), eb('s.valid_until', '>', now)])),
    )
    .selectAll('k')
    .select(['s.sha256', 's.valid_until'])
    .$if(id !== undefined, (q) => q.where('k.id', '=', id!))
    .orderBy('k.created_at')
    .orderBy('k.id')
    .execute();
  const keys = new Map<string, StoredAdminKey>();
  for (const row of rows) {
    let stored = keys.get(row.id);
    if (!stored) keys.set(row.id, (stored = { record: adminKeyRecordFrom(row), secrets: [] }));
    if (row.sha256 !== null) stored.secrets.push(secretFrom(row.sha256, row.valid_until));
  }
  return [...keys.values()];
}

function secretFrom(sha256: string, validUntil: string | Date | null): KeySecret {
  return { sha256, validUntil: isoOrNull(validUntil) };
}
