import type { Request, RequestHandler, Response } from 'express';
import { z } from 'zod';
import { namePart, RESOURCE_KIND_PATTERN } from '../config/index.js';
import { errors } from '../errors.js';
import { nounOf, type OwnershipRegistry } from '../ownership/index.js';
import { type ResourceKind, type ResourceRecord, type StoreHandle } from '../store/index.js';
import { storeFailure } from './audit.js';
import { invalidQuery, narrowedTeam, onlyParams, parseBody, singleParam } from '../admin-requests/index.js';

/** `entity/project/name`: the name a chat request uses for the model (`wandb-artifact:///entity/project/name`). */
const artifactSchema = z.string().regex(/^[^/\s]+\/[^/\s]+\/[^/\s:]+$/, 'must be entity/project/name, the path of its wandb-artifact:/// name');
const assignSchema = z.object({ team: namePart, project: namePart, artifact: artifactSchema.optional() }).strict();

/** What the resource handlers work on: the records in the durable store, and this instance's registry of them. */
export interface ResourceHandlerDeps {
  readonly handle: StoreHandle;
  readonly registry: OwnershipRegistry;
}

/** A record as the admin API shows it (SPEC 13.3): `artifact` only for models that have one. */
const view = (record: ResourceRecord): Record<string, string> => ({
  kind: record.kind,
  id: record.id,
  team: record.team,
  project: record.project,
  ...(record.artifact === null ? {} : { artifact: record.artifact }),
  createdAt: record.createdAt,
});

function kindOf(req: Request): ResourceKind {
  const kind = String(req.params.kind);
  // Any kind a config route may name (SPEC 20), not only model and training_job: a resource of a
  // kind no route names now may have been recorded while one did, and is listed and adopted alike.
  if (!RESOURCE_KIND_PATTERN.test(kind)) throw errors.resourceKindNotFound(kind);
  return kind as ResourceKind;
}

const databaseCall = async <T>(call: () => Promise<T>): Promise<T> => {
  try {
    return await call();
  } catch (err) {
    throw storeFailure(err);
  }
};

/** `kind/id`, the resource a write names: its audit target. */
function resourceOf(req: Request, res: Response): { kind: ResourceKind; id: string } {
  const kind = kindOf(req);
  const id = String(req.params.id);
  res.locals.auditTarget = `${kind}/${id}`;
  return { kind, id };
}

/** `GET /admin/resources[?team=][&project=][&kind=]` (SPEC 13.3): the ownership records. */
export const listResourcesHandler = ({ handle }: Pick<ResourceHandlerDeps, 'handle'>): RequestHandler => async (req, res) => {
  const query = req.query as Record<string, unknown>;
  onlyParams(query, ['team', 'project', 'kind']);
  const team = narrowedTeam(res, singleParam(query, 'team'));
  const project = singleParam(query, 'project');
  const kind = singleParam(query, 'kind');
  if (kind !== undefined && !RESOURCE_KIND_PATTERN.test(kind)) {
    throw invalidQuery('kind', `Query parameter "kind" must be a resource kind (model, training_job, or a kind of a config route), got "${kind}".`);
  }
  const filter = { ...(team === undefined ? {} : { team }), ...(project === undefined ? {} : { project }), ...(kind === undefined ? {} : { kind: kind as ResourceKind }) };
  const records = await databaseCall(() => handle.require().listResources(filter));
  res.json({ object: 'list', data: records.map(view) });
};

/**
 * `PUT /admin/resources/{kind}/{id}` with `{team, project, artifact?}`: assigns an owner (adopts
 * a resource made before ownership was on; a model may be given its `artifact`, so chat
 * requests naming it are guarded too).
 */
export const assignResourceHandler = ({ handle, registry }: ResourceHandlerDeps): RequestHandler => async (req, res) => {
  const { kind, id } = resourceOf(req, res);
  const { team, project, artifact } = parseBody(assignSchema, req);
  if (artifact !== undefined && kind !== 'model') throw errors.artifactOnlyForModel();
  // No artifact given: a record that has one keeps it.
  const record = await databaseCall(() =>
    handle.require().assignResource({ kind, id, team, project, artifact: artifact ?? null, createdAt: new Date().toISOString() }),
  );
  registry.apply(record, kind, id);
  res.json(view(record));
};

/** `DELETE /admin/resources/{kind}/{id}`: 204, the resource has no owner any more. */
export const releaseResourceHandler = ({ handle, registry }: ResourceHandlerDeps): RequestHandler => async (req, res) => {
  const { kind, id } = resourceOf(req, res);
  const released = await databaseCall(() => handle.require().releaseResource(kind, id));
  if (!released) throw errors.resourceNotRecorded(nounOf(kind), id);
  registry.apply(undefined, kind, id);
  res.status(204).end();
};
