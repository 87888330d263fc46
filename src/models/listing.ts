import { errors } from '../errors.js';
import type { ModelAccess, ModelCaller } from './access.js';
import type { ModelCatalog, ModelObject } from './catalog.js';

/** A team's trained models (ownership records with an artifact name, SPEC 13). */
export interface TrainedModels {
  trainedModelsOf(team: string): Iterable<{ readonly artifact: string | null; readonly createdAt: string }>;
}

const LIST_PATH = '/v1/models';

/**
 * `GET /v1/models` and `GET /v1/models/{id}` for one caller (SPEC 21, 22): the lists of every
 * upstream chat goes to, merged without duplicates (the first upstream's object wins), filtered
 * by the rule that admits chat (ModelAccess.refusal); the aliases whose target the caller may
 * use (`root` = the target); then the caller's own trained models.
 */
export class ModelListing {
  constructor(
    private readonly access: ModelAccess,
    private readonly catalogs: readonly ModelCatalog[],
    private readonly trained: TrainedModels,
    private readonly aliases: ReadonlyMap<string, string> = new Map(),
    /** The gateway answers every listing itself (routes or aliases: no one host's list is the answer). */
    readonly answersEveryList = false,
  ) {}

  /** Every model the caller may call, as the upstreams list them, then its aliases and its own trained ones. */
  async visibleTo(caller: ModelCaller, authorization: string | undefined): Promise<ModelObject[]> {
    const visible: ModelObject[] = [];
    const listed = new Set<string>();
    for (const model of await this.merged(authorization)) {
      if (listed.has(model.id) || this.access.refusal(caller, model.id) !== undefined) continue;
      listed.add(model.id);
      visible.push(model);
    }
    for (const [alias, target] of this.aliases) {
      if (listed.has(alias) || this.access.refusal(caller, target) !== undefined) continue;
      listed.add(alias);
      const of = visible.find((model) => model.id === target);
      visible.push({ id: alias, object: 'model', created: of?.created ?? 0, owned_by: of?.owned_by ?? 'tollgate', root: target });
    }
    const team = caller.project.team;
    for (const record of this.trained.trainedModelsOf(team)) {
      const id = `wandb-artifact:///${record.artifact}`;
      if (record.artifact === null || listed.has(id)) continue;
      listed.add(id);
      visible.push({ id, object: 'model', created: Math.floor(Date.parse(record.createdAt) / 1000), owned_by: team });
    }
    return visible;
  }

  /** Each upstream's cached list in order; one that cannot be had is left out, unless none can (then its 502). */
  private async merged(authorization: string | undefined): Promise<ModelObject[]> {
    if (this.catalogs.length === 1) return [...(await this.catalogs[0]!.list(authorization))];
    const lists = await Promise.allSettled(this.catalogs.map((catalog) => catalog.list(authorization)));
    const had = lists.filter((list) => list.status === 'fulfilled');
    if (had.length === 0) throw (lists[0] as PromiseRejectedResult).reason;
    return had.flatMap((list) => list.value);
  }

  /** The answer to a GET under /v1/models: the list, or one model (ids may hold `/`), or 404 model_not_found. */
  async answer(caller: ModelCaller, path: string, authorization: string | undefined): Promise<unknown> {
    const visible = await this.visibleTo(caller, authorization);
    const rest = path.replace(/\/$/, '').slice(LIST_PATH.length);
    if (rest === '') return { object: 'list', data: visible };
    const id = decodeURIComponent(rest.slice(1));
    const found = visible.find((model) => model.id === id);
    if (!found) throw errors.modelNotFound(id);
    return found;
  }
}
