import type { RouteConfig } from '../config/index.js';
import { parseJsonPointer } from '../json-pointer.js';
import { ID_FIELD, ROUTES, templatesOverlap, type AnswerId, type OwnershipRule, type RouteSpec } from './routes.js';

/**
 * A `routes:` entry (SPEC 20) as an entry of the route table, the same kind as the built-in
 * ones: the pipeline, metrics (`route` = the template), ledger and limits read it alike.
 * A limited route is counted as a request, as /v1/preview/* is (a ledger row with tokens 0); so is
 * an unlimited one that keeps its ledger row (`ledger: true`, a status poll).
 */
export function configRouteSpec(route: RouteConfig): RouteSpec {
  const ownership = ownershipRuleOf(route.ownership);
  const ledger = route.ledger ?? route.limited;
  return {
    template: route.path,
    methods: route.methods,
    upstream: route.upstream,
    body: route.body,
    limited: route.limited,
    ...(ledger !== route.limited ? { ledger } : {}),
    metering: ledger ? 'requests' : 'none',
    ...(ownership ? { ownership } : {}),
    ...(route['checks-model'] === undefined ? {} : { checksModel: route['checks-model'] }),
  };
}

/** The config's spelling of a rule (`creates`, `checks`, `checks-body`, `unguarded`) as the general rule. */
function ownershipRuleOf(rule: RouteConfig['ownership']): OwnershipRule | undefined {
  if (rule === undefined || rule === 'unguarded') return undefined;
  const body = rule['checks-body'];
  const answered = rule['checks-response'];
  return {
    ...(rule.checks ? { checks: { param: rule.checks.param, kind: rule.checks.kind } } : {}),
    ...(body ? { checksBody: { field: body.field, kind: body.kind } } : {}),
    ...(rule.creates ? { creates: answerIdOf(rule.creates) } : {}),
    ...(answered ? { checksResponse: answerIdOf(answered) } : {}),
  };
}

/** `creates: run` or `{ kind, id: "/run_id" }` as the kind and the pointer's tokens (parsed once, here). */
function answerIdOf(spelled: string | { kind: string; id: string }): AnswerId {
  if (typeof spelled === 'string') return { kind: spelled, id: ID_FIELD };
  return { kind: spelled.kind, id: parseJsonPointer(spelled.id) };
}

/** Config routes to the service that say `unguarded`: named in a warning while ownership is on. */
export function unguardedRoutes(routes: readonly RouteConfig[]): string[] {
  return routes.filter((r) => r.upstream === 'service' && r.ownership === 'unguarded').map((r) => `${r.methods.join(',')} ${r.path}`);
}

/**
 * What is wrong with the configuration's routes taken with the built-in table and the ownership
 * policy, as a config error says it (`routes[0].path: ...`): a config route may not overlap a
 * built-in one, and while ownership is on a route to the service must say how it is guarded.
 */
export function configRoutesProblem(routes: readonly RouteConfig[], ownershipOn: boolean): string | undefined {
  for (const [i, route] of routes.entries()) {
    const builtIn = ROUTES.find((r) => templatesOverlap(r.template, route.path));
    if (builtIn) return `routes[${i}].path: overlaps the built-in route ${builtIn.template}`;
    if (ownershipOn && route.upstream === 'service' && route.ownership === undefined) {
      return `routes[${i}].ownership: ownership is on: a route to the service must say how it is guarded (creates, checks, checks-body) or say unguarded`;
    }
  }
  return undefined;
}
