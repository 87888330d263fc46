export { createRouteTable, assertSafePath, resolveRoute, ROUTES, type RouteSpec, type RouteMatch, type RouteKind, type RouteTable, type UpstreamName } from './routes.js';
export { createUpstream, type Upstream, type UpstreamErrorKind, type ForwardHandlers, type ForwardHandle } from './upstream.js';
export { relayResponse, type BodyTap, type RelayOutcome } from './relay.js';
export { readBody, BodyLimitCounter, BufferedBody, assertDeclaredLength } from './body.js';
export { forwardableHeaders } from './headers.js';
