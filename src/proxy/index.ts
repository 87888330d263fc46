export { createRouteTable, resolveRoute, ROUTES, type BodyHandling, type Metering, type RouteSpec, type RouteMatch, type RouteTable, type UpstreamName } from './routes.js';
export { createUpstream, type Upstream, type ForwardHandlers, type ForwardHandle } from './upstream.js';
export type { UpstreamErrorKind } from './upstream-error.js';
export { relayResponse, type BodyTap, type RelayOutcome } from './relay.js';
export { readBody, BodyLimitCounter, BufferedBody, assertDeclaredLength } from './body.js';
export { forwardableHeaders } from './headers.js';
