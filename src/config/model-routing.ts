import { z } from 'zod';
import { upstreamReference } from './upstreams.js';

/**
 * `models.routes`, `models.aliases`, `models.fallbacks` (SPEC 22): their shape. What needs the
 * whole table (cycles, shadowed names, unknown groups) is checked where it is compiled, in models/.
 */
const modelName = z.string().min(1, 'must not be empty').max(512);

/** One route: the first whose `match` pattern (`*` wildcard) covers a chat's model names its upstream. */
const modelRouteSchema = z.object({ match: modelName, upstream: upstreamReference }).strict();
export type ModelRouteConfig = z.infer<typeof modelRouteSchema>;

/** The keys `models:` gains for routing; spread into its schema. */
export const modelRoutingShape = {
  routes: z.array(modelRouteSchema).nullish().transform((v) => v ?? []),
  /** A name clients may send for another model: the forwarded body carries the target. */
  aliases: z.record(modelName, modelName).nullish().transform((v) => v ?? {}),
  /** A model (name, `*` pattern or `@group`) and the models to try, in order, when its upstream fails. */
  fallbacks: z.record(modelName, z.array(modelName).min(1, 'must name at least one model')).nullish().transform((v) => v ?? {}),
};
