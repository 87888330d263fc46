import type { Insertable, Kysely } from 'kysely';
import type { ResourceFilter, ResourceKind, ResourceRecord } from '../core/durable-store.js';
import { isoInstant, resourceRecordFrom } from '../core/rows.js';
import type { Database, ResourcesTable } from '../core/schema.js';

function resourceRow(record: ResourceRecord): Insertable<ResourcesTable> {
  return {
    kind: record.kind,
    id: record.id,
    team: record.team,
    project: record.project,
    artifact: record.artifact,
    created_at: isoInstant(record.createdAt),
  };
}

export async function selectResource(db: Kysely<Database>, kind: ResourceKind, id: string): Promise<ResourceRecord | undefined> {
  const row = await db.selectFrom('resources').selectAll().where('kind', '=', kind).where('id', '=', id).executeTakeFirst();
  return row && resourceRecordFrom(row);
}

export async function selectModelByArtifact(db: Kysely<Database>, artifact: string): Promise<ResourceRecord | undefined> {
  const row = await db
    .selectFrom('resources')
    .selectAll()
    .where('artifact', '=', artifact)
    .where('kind', '=', 'model')
    .orderBy('created_at')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  return row && resourceRecordFrom(row);
}

/**
 * Inserts unless the kind+id is taken. The primary key decides between racing instances: the
 * loser's insert does nothing (after waiting for the winner's commit on PostgreSQL), then reads
 * the winner's row. `inserted` says whether this call wrote.
 */
export async function insertResourceIfAbsent(trx: Kysely<Database>, record: ResourceRecord): Promise<{ row: ResourceRecord; inserted: boolean }> {
  const inserted = await trx
    .insertInto('resources')
    .values(resourceRow(record))
    .onConflict((oc) => oc.columns(['kind', 'id']).doNothing())
    .returningAll()
    .executeTakeFirst();
  if (inserted) return { row: resourceRecordFrom(inserted), inserted: true };
  const existing = await selectResource(trx, record.kind, record.id);
  if (!existing) throw new Error(`resource ${record.kind} ${record.id} neither inserted nor found`);
  return { row: existing, inserted: false };
}

/** Upsert for admin adoption: the owner changes; createdAt stays, and the artifact unless a new one is given. */
export async function upsertResource(trx: Kysely<Database>, record: ResourceRecord): Promise<ResourceRecord> {
  const row = await trx
    .insertInto('resources')
    .values(resourceRow(record))
    .onConflict((oc) =>
      oc.columns(['kind', 'id']).doUpdateSet((eb) => ({
        team: eb.ref('excluded.team'),
        project: eb.ref('excluded.project'),
        artifact: eb.fn.coalesce('excluded.artifact', 'resources.artifact'),
      })),
    )
    .returningAll()
    .executeTakeFirstOrThrow();
  return resourceRecordFrom(row);
}

export async function deleteResource(trx: Kysely<Database>, kind: ResourceKind, id: string): Promise<boolean> {
  const deleted = await trx.deleteFrom('resources').where('kind', '=', kind).where('id', '=', id).returning('id').executeTakeFirst();
  return deleted !== undefined;
}

export async function selectResources(db: Kysely<Database>, filter: ResourceFilter): Promise<ResourceRecord[]> {
  const rows = await db
    .selectFrom('resources')
    .selectAll()
    .$if(filter.team !== undefined, (q) => q.where('team', '=', filter.team!))
    .$if(filter.project !== undefined, (q) => q.where('project', '=', filter.project!))
    .$if(filter.kind !== undefined, (q) => q.where('kind', '=', filter.kind!))
    .orderBy('created_at')
    .orderBy('kind')
    .orderBy('id')
    .execute();
  return rows.map(resourceRecordFrom);
}
