export { assertNoEncodedNul, createRouteTable, malformedPathEncoding, pathParam, resolveRoute, routeOf, ROUTES, templatesOverlap, type AnswerId, ID_FIELD, type BodyHandling, type Metering, type OwnershipRule, type RouteSpec, type RouteMatch, type RouteResolution, type RouteTable } from './routes.js';
export { configRouteSpec, unguardedRoutes } from './config-routes.js';
export type { UpstreamName } from '../config/index.js';
export { createUpstream, type Upstream, type UpstreamEvents, type ForwardHandlers, type ForwardHandle } from './upstream.js';
export type { UpstreamErrorKind, UpstreamRetryReason } from './upstream-error.js';
export { relayResponse, type BodyTap, type RelayOutcome } from './relay.js';
export { readBody, BodyLimitCounter, BufferedBody, assertDeclaredLength, type BufferedRequest, type ReadLimits } from './body.js';
export { BufferBudget } from './buffer-budget.js';
export { addIdentityHeaders, CLIENT_FORWARDING_HEADERS, endToEndHeaders, forwardableHeaders, IDENTITY_HEADERS } from './headers.js';
