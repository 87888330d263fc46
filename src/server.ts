import { createServer, type RequestListener, type Server } from 'node:http';
import { UPSTREAM_NAMES, type Config } from './config/index.js';
import { connectionCapFor, ConnectionRegistry, type ConnectionEvents } from './connections/index.js';

const UNOBSERVED: ConnectionEvents = { watch: () => undefined, evicted: () => undefined, refused: () => undefined };

/**
 * The listening HTTP server with the protections of `server.*`: a client must send its
 * headers within headersTimeoutMs (Node then answers 408 and closes; this also closes
 * connections that send nothing), idle keep-alive connections close, headers are bounded,
 * and client connections are capped below the open-file limit and shed under pressure
 * (ConnectionRegistry), so a flood of idle sockets can neither starve the gateway of
 * descriptors for its upstreams nor keep clients out. Both timeouts are set explicitly: Node
 * derives headersTimeout from requestTimeout, and a requestTimeout of 0 would turn it off.
 * Node's own `maxConnections` is left unset: it refuses new connections at the cap, where
 * the registry closes the one that has waited longest instead.
 */
export function createGatewayServer(config: Config, listener: RequestListener, events: ConnectionEvents = UNOBSERVED): Server {
  const settings = config.server;
  const server = createServer(
    {
      headersTimeout: settings.headersTimeoutMs,
      requestTimeout: settings.requestTimeoutMs,
      keepAliveTimeout: settings.keepAliveTimeoutMs,
      maxHeaderSize: settings.maxHeaderBytes,
      // How often Node checks the timeouts above (default 30 s would let short ones overrun).
      connectionsCheckingInterval: Math.min(1000, Math.ceil(settings.headersTimeoutMs / 4)),
    },
    listener,
  );
  const upstreamSockets = UPSTREAM_NAMES.reduce((sum, name) => sum + config.upstreams[name].maxSockets, 0);
  const policy = {
    maxConnections: connectionCapFor(settings.maxConnections, upstreamSockets),
    pressureHeadersTimeoutMs: settings.pressureHeadersTimeoutMs,
  };
  new ConnectionRegistry(server, policy, events);
  return server;
}
