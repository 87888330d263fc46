import type { Kysely } from 'kysely';
import type { ConsoleSessionRecord, SessionPerson } from '../core/durable-store.js';
import { isoInstant } from '../core/rows.js';
import type { Database } from '../core/schema.js';

/** Console sessions (SPEC 17), by the digest of their cookie token. */
export async function insertSession(db: Kysely<Database>, record: ConsoleSessionRecord): Promise<void> {
  const now = isoInstant(record.createdAt);
  // Expired rows would otherwise stay for good: nothing else reads them once the cookie is gone.
  await db.deleteFrom('console_sessions').where('expires_at', '<=', now).execute();
  await db
    .insertInto('console_sessions')
    .values({
      token_sha256: record.tokenSha256,
      admin_key_id: record.adminKeyId,
      csrf_token: record.csrfToken,
      created_at: now,
      expires_at: isoInstant(record.expiresAt),
      person: record.person === undefined ? null : JSON.stringify(record.person),
    })
    .execute();
}

export async function selectSession(db: Kysely<Database>, tokenSha256: string): Promise<ConsoleSessionRecord | undefined> {
  const row = await db.selectFrom('console_sessions').selectAll().where('token_sha256', '=', tokenSha256).executeTakeFirst();
  if (!row) return undefined;
  return {
    tokenSha256: row.token_sha256,
    adminKeyId: row.admin_key_id,
    csrfToken: row.csrf_token,
    createdAt: isoInstant(row.created_at),
    expiresAt: isoInstant(row.expires_at),
    ...(row.person === null ? {} : { person: JSON.parse(row.person) as SessionPerson }),
  };
}

export async function removeSession(db: Kysely<Database>, tokenSha256: string): Promise<boolean> {
  const result = await db.deleteFrom('console_sessions').where('token_sha256', '=', tokenSha256).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
