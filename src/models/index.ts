/** Models are governed (SPEC 21): who may use which model, what each caller's /v1/models lists, and where each chat goes (SPEC 22). */
import { ConfigError, type Config } from '../config/index.js';
import { ModelAccess, type ArtifactOwners, type TeamModelLists } from './access.js';
import { httpListFetcher, ModelCatalog } from './catalog.js';
import { ModelListing, type TrainedModels } from './listing.js';
import { modelListProblem, ModelRules } from './rules.js';
import { modelRoutingProblem, ModelRouter } from './routing.js';

export { ModelAccess, MODEL_DENIAL_SCOPES, type ModelCaller, type ModelDenialScope, type TeamModelLists, type ArtifactOwners } from './access.js';
export { ModelCatalog, httpListFetcher, type ModelObject, type ListFetcher } from './catalog.js';
export { ModelListing, type TrainedModels } from './listing.js';
export { ModelList, patternCovers } from './patterns.js';
export { ModelRules, modelListProblem } from './rules.js';
export { ModelRouter, modelRoutingProblem, type ModelRoute } from './routing.js';

/** Every list of the configuration checked with its key path: the one-line start-up / reload refusal. */
export function checkModelLists(config: Pick<Config, 'models' | 'teams' | 'auth'>): void {
  const { groups } = config.models;
  const lists: Array<[unknown, string]> = [
    ...Object.entries(groups).map(([name, list]): [unknown, string] => [list, `models.groups.${name}`]),
    [config.models.default, 'models.default'],
    ...config.teams.records.map((team, i): [unknown, string] => [team.models, `teams[${i}].models`]),
    ...config.auth.keys.map((key, i): [unknown, string] => [key.models, `auth.keys[${i}].models`]),
    [config.auth.jwt?.models, 'auth.jwt.models'],
  ];
  for (const [list, path] of lists) {
    if (list === null || list === undefined) continue;
    const problem = modelListProblem(list, groups, path);
    if (problem !== undefined) throw new ConfigError(problem);
  }
  for (const [name, list] of Object.entries(groups)) {
    const nested = list.findIndex((p) => p.startsWith('@'));
    if (nested !== -1) throw new ConfigError(`models.groups.${name}[${nested}]: a group holds patterns, not other groups`);
  }
}

export interface ModelsDeps {
  readonly teams: TeamModelLists;
  readonly owners: ArtifactOwners & TrainedModels;
  readonly onRefreshError: (err: unknown) => void;
  /** Ownership is on for this configuration (SPEC 13). */
  readonly ownershipOn: boolean;
}

/** What one configuration builds for models: the rule, and the listing with its cached host list. */
export interface Models {
  readonly access: ModelAccess;
  readonly listing: ModelListing;
  /** Each listed upstream's cached model list, by upstream name. */
  readonly catalogs: ReadonlyMap<string, ModelCatalog>;
  /** Where each chat goes: routes, aliases, fallbacks (SPEC 22). */
  readonly router: ModelRouter;
}

/** One upstream's catalog settings: a reload that keeps them keeps that upstream's cached list. */
const catalogSettings = (config: Pick<Config, 'models' | 'upstreams'>, upstream: string): string =>
  JSON.stringify([config.models.listCacheMs, config.upstreams[upstream]]);

/** The upstreams whose lists /v1/models merges: every one chat goes to, and the inference host (SPEC 21). */
function listedUpstreams(router: ModelRouter): string[] {
  return router.active ? [...new Set([...router.chatUpstreams(), 'inference'])] : ['inference'];
}

/** Builds (and checks) the models part of a configuration; `previous` lends the catalogs of upstreams that did not change. */
export function createModels(config: Config, deps: ModelsDeps, previous?: { models: Models; config: Config }): Models {
  checkModelLists(config);
  const problem = modelRoutingProblem(config.models);
  if (problem !== undefined) throw new ConfigError(problem);
  const router = new ModelRouter(config.models);
  const access = new ModelAccess(new ModelRules(config.models), deps.teams, deps.owners, deps.ownershipOn);
  const catalogs = new Map<string, ModelCatalog>();
  for (const upstream of listedUpstreams(router)) {
    const kept = previous && catalogSettings(previous.config, upstream) === catalogSettings(config, upstream) ? previous.models.catalogs.get(upstream) : undefined;
    catalogs.set(upstream, kept ?? newCatalog(config, upstream, deps.onRefreshError));
  }
  const listing = new ModelListing(access, [...catalogs.values()], deps.owners, router.aliases, router.active);
  return { access, catalogs, router, listing };
}

function newCatalog(config: Config, name: string, onRefreshError: (err: unknown) => void): ModelCatalog {
  const upstream = config.upstreams[name]!;
  const url = upstream.url ?? upstream.targets![0]!.url;
  const bearer = upstream.auth === 'passthrough' ? undefined : upstream.auth.bearer;
  return new ModelCatalog(httpListFetcher(url, bearer, upstream.timeoutMs, name), config.models.listCacheMs, onRefreshError);
}
