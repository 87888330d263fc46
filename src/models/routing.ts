import type { ModelsConfig } from '../config/index.js';
import { ModelList } from './patterns.js';

/** Where one requested model name goes (SPEC 22): compiled once per name, then read from a cache. */
export interface ModelRoute {
  /** The name the client sent. */
  readonly requested: string;
  /** The model the chat asks the upstream for: the alias's target, else the requested name. */
  readonly model: string;
  /** The upstream the chat goes to. */
  readonly upstream: string;
  /** Whether `requested` was an alias: the forwarded body's `model` is rewritten to `model`. */
  readonly aliased: boolean;
  /** The models to try, in order, when `upstream` fails before any byte reached the client. */
  readonly fallbacks: readonly string[];
}

/** Distinct model names whose route is remembered (model names come from clients). */
const MAX_CACHED_NAMES = 10_000;
/** Where a chat goes when no route matches: today's behaviour. */
const DEFAULT_UPSTREAM = 'service';

type RoutingConfig = Pick<ModelsConfig, 'routes' | 'aliases' | 'fallbacks' | 'groups'>;

/**
 * `models.routes`, `models.aliases` and `models.fallbacks` compiled (SPEC 22): one lookup per
 * chat, cached per model string. Aliases resolve (chains followed) at build; routes are tried in
 * order, the first whose pattern matches names the upstream; fallback keys are names, patterns or `@group`s.
 */
export class ModelRouter {
  /** Whether any route, alias or fallback is configured (else every chat goes to `service`, as before). */
  readonly active: boolean;
  /** Each alias and the model it stands for, chains resolved. */
  readonly aliases: ReadonlyMap<string, string>;
  private readonly routes: ReadonlyArray<{ readonly list: ModelList; readonly upstream: string }>;
  private readonly fallbackRules: ReadonlyArray<{ readonly list: ModelList; readonly models: readonly string[] }>;
  private readonly cache = new Map<string, ModelRoute>();

  /** `config` passed `modelRoutingProblem`. */
  constructor(config: RoutingConfig) {
    this.aliases = new Map(Object.keys(config.aliases).map((name) => [name, resolveAlias(config.aliases, name)]));
    this.routes = config.routes.map((route) => ({ list: new ModelList([route.match]), upstream: route.upstream }));
    this.fallbackRules = Object.entries(config.fallbacks).map(([key, models]) => ({ list: new ModelList(patternsOf(key, config.groups)), models }));
    this.active = this.routes.length > 0 || this.aliases.size > 0 || this.fallbackRules.length > 0;
  }

  /** The route of a chat that asked for `requested`. */
  resolve(requested: string): ModelRoute {
    let route = this.cache.get(requested);
    if (route === undefined) {
      const model = this.aliases.get(requested) ?? requested;
      route = { requested, model, upstream: this.upstreamOf(model), aliased: model !== requested, fallbacks: this.fallbacksOf(model) };
      if (this.cache.size >= MAX_CACHED_NAMES) this.cache.clear();
      this.cache.set(requested, route);
    }
    return route;
  }

  /** The upstream a chat for `model` (no alias) goes to: the first matching route's, else `service`. */
  upstreamOf(model: string): string {
    for (const route of this.routes) if (route.list.allows(model)) return route.upstream;
    return DEFAULT_UPSTREAM;
  }

  /** Every upstream some chat may go to, in route order: whose model lists /v1/models merges. */
  chatUpstreams(): string[] {
    const names = new Set(this.routes.map((route) => route.upstream));
    if (!this.routes.some((route) => route.list.allowsAll)) names.add(DEFAULT_UPSTREAM);
    return [...names];
  }

  private fallbacksOf(model: string): readonly string[] {
    // A literal key wins over a pattern; among patterns, the first written.
    const literal = this.fallbackRules.find((rule) => rule.list.patterns.length === 1 && rule.list.patterns[0] === model);
    const models = (literal ?? this.fallbackRules.find((rule) => rule.list.allows(model)))?.models ?? [];
    // A pattern's fallbacks may include the model itself: it is never tried twice.
    return models.includes(model) ? models.filter((other) => other !== model) : models;
  }
}

function resolveAlias(aliases: Readonly<Record<string, string>>, name: string): string {
  let target = aliases[name]!;
  while (Object.hasOwn(aliases, target)) target = aliases[target]!;
  return target;
}

const patternsOf = (key: string, groups: ModelsConfig['groups']): string[] => (key.startsWith('@') ? [...(groups[key.slice(1)] ?? [])] : [key]);

/**
 * What is wrong with the routing tables, with its key path (SPEC 22), or undefined: an alias
 * cycle, an alias named like a route's literal pattern, a fallback to itself, an unknown group.
 */
export function modelRoutingProblem(config: RoutingConfig): string | undefined {
  const literals = new Set(config.routes.map((route) => route.match).filter((match) => !match.includes('*')));
  for (const name of Object.keys(config.aliases)) {
    const path = `models.aliases.${name}`;
    if (literals.has(name)) return `${path}: "${name}" is the literal name of a models.routes pattern: the alias would shadow that model`;
    const seen = new Set([name]);
    for (let target = config.aliases[name]!; Object.hasOwn(config.aliases, target); target = config.aliases[target]!) {
      if (seen.has(target)) return `${path}: the aliases form a cycle (${[...seen, target].join(' -> ')})`;
      seen.add(target);
    }
  }
  for (const [key, models] of Object.entries(config.fallbacks)) {
    const path = `models.fallbacks.${key}`;
    if (key.startsWith('@') && !Object.hasOwn(config.groups, key.slice(1))) return `${path}: unknown model group "${key}"`;
    for (const [i, model] of models.entries()) {
      if (model === key) return `${path}[${i}]: a model cannot fall back to itself`;
      if (model.startsWith('@')) return `${path}[${i}]: a fallback names one model, not a group ("${model}")`;
      if (model.includes('*')) return `${path}[${i}]: a fallback names one model, not a pattern ("${model}")`;
    }
  }
  return undefined;
}
