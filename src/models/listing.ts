import { errors } from '../errors.js';
import type { ModelAccess, ModelCaller } from './access.js';
import type { ModelCatalog, ModelObject } from './catalog.js';

/** A team's trained models (ownership records with an artifact name, SPEC 13). */
export interface TrainedModels {
  trainedModelsOf(team: string): Iterable<{ readonly artifact: string | null; readonly createdAt: string }>;
}

const LIST_PATH = '/v1/models';

/**
 * `GET /v1/models` and `GET /v1/models/{id}` for one caller (SPEC 21): the host's list filtered
 * by the rule that admits chat (ModelAccess.refusal), plus the caller's own trained models.
 */
export class ModelListing {
  constructor(
    private readonly access: ModelAccess,
    private readonly catalog: ModelCatalog,
    private readonly trained: TrainedModels,
  ) {}

  /** Every model the caller may call, as the upstream lists them, then its own trained ones. */
  async visibleTo(caller: ModelCaller, authorization: string | undefined): Promise<ModelObject[]> {
    const upstream = await this.catalog.list(authorization);
    const visible = upstream.filter((model) => this.access.refusal(caller, model.id) === undefined);
    const listed = new Set(visible.map((model) => model.id));
    const team = caller.project.team;
    for (const record of this.trained.trainedModelsOf(team)) {
      const id = `wandb-artifact:///${record.artifact}`;
      if (record.artifact === null || listed.has(id)) continue;
      listed.add(id);
      visible.push({ id, object: 'model', created: Math.floor(Date.parse(record.createdAt) / 1000), owned_by: team });
    }
    return visible;
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
