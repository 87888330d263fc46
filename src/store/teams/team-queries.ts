import type { Kysely, Updateable } from 'kysely';
import type { SqlDialect } from '../core/dialect.js';
import type { TeamDeletion, TeamPatch, TeamRecord } from '../core/durable-store.js';
import { TeamIdTakenError } from '../core/errors.js';
import { isoInstant, teamRecordFrom } from '../core/rows.js';
import type { Database, TeamsTable } from '../core/schema.js';

export async function insertTeam(trx: Kysely<Database>, dialect: SqlDialect, record: TeamRecord): Promise<TeamRecord> {
  const row = await trx
    .insertInto('teams')
    .values({
      id: record.id,
      description: record.description,
      limits: JSON.stringify(record.limits),
      models: record.models === null || record.models === undefined ? null : JSON.stringify(record.models),
      disabled: dialect.flag(record.disabled),
      created_at: isoInstant(record.createdAt),
    })
    .onConflict((oc) => oc.column('id').doNothing())
    .returningAll()
    .executeTakeFirst();
  if (!row) throw new TeamIdTakenError(record.id);
  return teamRecordFrom(row);
}

export async function selectTeam(db: Kysely<Database>, id: string): Promise<TeamRecord | undefined> {
  const row = await db.selectFrom('teams').selectAll().where('id', '=', id).executeTakeFirst();
  return row && teamRecordFrom(row);
}

export async function selectTeams(db: Kysely<Database>): Promise<TeamRecord[]> {
  const rows = await db.selectFrom('teams').selectAll().orderBy('id').execute();
  return rows.map(teamRecordFrom);
}

export async function patchTeam(trx: Kysely<Database>, dialect: SqlDialect, id: string, patch: TeamPatch): Promise<TeamRecord | undefined> {
  const set: Updateable<TeamsTable> = {};
  if (patch.description !== undefined) set.description = patch.description;
  if (patch.limits !== undefined) set.limits = JSON.stringify(patch.limits);
  if (patch.models !== undefined) set.models = patch.models === null ? null : JSON.stringify(patch.models);
  if (patch.disabled !== undefined) set.disabled = dialect.flag(patch.disabled);
  if (Object.keys(set).length === 0) return selectTeam(trx, id);
  const row = await trx.updateTable('teams').set(set).where('id', '=', id).returningAll().executeTakeFirst();
  return row && teamRecordFrom(row);
}

/** In the write transaction: a key created concurrently either sees the team or is counted here. */
export async function removeTeam(trx: Kysely<Database>, id: string): Promise<TeamDeletion> {
  const inUse = await trx.selectFrom('api_keys').select('id').where('team', '=', id).where('revoked_at', 'is', null).limit(1).executeTakeFirst();
  if (inUse) return (await selectTeam(trx, id)) ? 'in_use' : 'not_found';
  const deleted = await trx.deleteFrom('teams').where('id', '=', id).returning('id').executeTakeFirst();
  return deleted ? 'deleted' : 'not_found';
}
