import type { RequestHandler } from 'express';
import { utcDay, utcMonthStart } from '../calendar.js';
import type { Ledger } from '../metering/index.js';
import type { ModelsConfig } from '../config/index.js';
import type { ModelAccess, ModelRouter } from '../models/index.js';
import type { Upstream } from '../proxy/index.js';
import { nanosToAmount } from '../money.js';
import { type StoreHandle } from '../store/index.js';
import type { TeamAdmin } from '../teams/index.js';
import { storeFailure } from './audit.js';
import { onlyParams, teamScopeOf } from '../admin-requests/index.js';

export interface ModelsHandlerDeps {
  readonly teams: TeamAdmin;
  readonly models: () => ModelAccess;
  readonly handle: StoreHandle;
  readonly ledger: Ledger;
  readonly currency: () => string;
  readonly modelRouting: () => ModelRoutingSource;
}

/** What the routing part of the answer is read from: the running configuration's. */
export interface ModelRoutingSource {
  readonly config: Pick<ModelsConfig, 'routes' | 'fallbacks'>;
  readonly router: ModelRouter;
  readonly upstreams: Readonly<Record<string, Pick<Upstream, 'targetStates'>>>;
}

/**
 * The routing tables as the gateway applies them (SPEC 22): routes in order (then the default),
 * aliases with chains resolved, fallbacks, and each upstream's targets with their state. Names
 * and host:port only: an upstream's credentials never leave the configuration.
 */
function routingView({ config, router, upstreams }: ModelRoutingSource) {
  const health = Object.fromEntries(
    Object.entries(upstreams).map(([name, upstream]) => {
      const targets = upstream.targetStates().map(({ target, state }) => ({ target, state }));
      return [name, { up: targets.filter((t) => t.state === 'up').length, targets }];
    }),
  );
  return {
    routes: [
      ...config.routes.map(({ match, upstream }) => ({ match, upstream, default: false })),
      // What no route matches goes to the training service, as before routing existed.
      ...(config.routes.some((route) => route.match === '*') ? [] : [{ match: '*', upstream: 'service', default: true }]),
    ],
    aliases: [...router.aliases].map(([alias, target]) => ({ alias, target, upstream: router.upstreamOf(target) })),
    fallbacks: Object.entries(config.fallbacks).map(([model, to]) => ({ model, to: to.map((name) => ({ model: name, upstream: router.upstreamOf(name) })) })),
    upstreams: health,
  };
}

/** How long a read waits for this instance's buffered rows to reach the database (as /admin/usage). */
const FLUSH_BEFORE_READ_MS = 1000;

interface ModelUsage {
  team: string;
  model: string;
  requests: number;
  total_tokens: number;
  costNanos: number;
}

/** This month's ledger summed per team and model (a team-admin's: its team's only). */
async function usageThisMonth(deps: ModelsHandlerDeps, team: string | undefined): Promise<ModelUsage[]> {
  await deps.ledger.flush(Date.now() + FLUSH_BEFORE_READ_MS);
  const now = Date.now();
  const rows = await deps.handle.require().aggregateUsage({ from: utcDay(utcMonthStart(now)), to: utcDay(now), groupBy: 'model', ...(team === undefined ? {} : { team }) });
  const sums = new Map<string, ModelUsage>();
  for (const row of rows) {
    const key = `${row.team}\n${row.model}`;
    const sum = sums.get(key) ?? { team: row.team, model: row.model ?? '', requests: 0, total_tokens: 0, costNanos: 0 };
    sum.requests += row.requests;
    sum.total_tokens += row.totalTokens;
    sum.costNanos += row.costNanos;
    sums.set(key, sum);
  }
  return [...sums.values()];
}

/**
 * `GET /admin/models` (SPEC 21): the groups, the default, each team's own and effective list
 * (groups resolved), and this month's usage by team and model. A team-admin sees its team only.
 */
export const modelsHandler = (deps: ModelsHandlerDeps): RequestHandler => async (req, res, next) => {
  try {
    onlyParams(req.query as Record<string, unknown>, []);
    const scope = teamScopeOf(res);
    const access = deps.models();
    const { rules } = access;
    const teams = (await deps.teams.list(scope)).map((team) => ({ id: team.id, models: team.models, effective: access.teamList(team.id).patterns }));
    const usage = (await usageThisMonth(deps, scope)).map(({ costNanos, ...sum }) => ({ ...sum, cost: nanosToAmount(costNanos) }));
    res.json({
      // Groups are what a list may name: a team-admin needs them to narrow its keys.
      groups: rules.groups,
      default: rules.config.default,
      teams,
      currency: deps.currency(),
      usage,
      routing: routingView(deps.modelRouting()),
    });
  } catch (err) {
    next(storeFailure(err));
  }
};
