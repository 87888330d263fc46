import { createServer, type RequestListener, type Server } from 'node:http';
import { type Config } from './config/index.js';
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
export function createGatewayServer(config: Pick<Config, 'server' | 'upstreams'>, listener: RequestListener, events: ConnectionEvents = UNOBSERVED): Server {
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
  const upstreamSockets = Object.values(config.upstreams).reduce((sum, upstream) => sum + upstream.maxSockets, 0);
  const policy = {
    maxConnections: connectionCapFor(settings.maxConnections, upstreamSockets),
    pressureHeadersTimeoutMs: settings.pressureHeadersTimeoutMs,
  };
  new ConnectionRegistry(server, policy, events);
  return server;
}

/** The gateway's listeners: the main one (/v1, admin, health) and, with `metrics.port`, one for the exposition alone. */
export interface GatewayListeners {
  readonly main: Server;
  readonly metrics: Server | undefined;
}

/** What the listeners serve: the built gateway (its request listener, metrics handler and config). */
export interface ListenedGateway {
  readonly config: Config;
  readonly handleRequest: RequestListener;
  readonly metricsHandler: RequestListener;
  readonly connectionEvents?: ConnectionEvents;
}

/** Opens the listeners on `server.host`: the main port and, when set, `metrics.port`. */
export async function openListeners(gateway: ListenedGateway): Promise<GatewayListeners> {
  const { config } = gateway;
  const main = createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents);
  await listen(main, config.server.port, config.server.host);
  if (config.metrics.port === null) return { main, metrics: undefined };
  const { path } = config.metrics;
  const metrics = createServer((req, res) => {
    if (req.method === 'GET' && req.url?.split('?')[0] === path) gateway.metricsHandler(req, res);
    else {
      res.writeHead(404, { 'content-type': 'text/plain' });
      res.end('not found\n');
    }
  });
  await listen(metrics, config.metrics.port, config.server.host);
  return { main, metrics };
}

/**
 * Stops accepting connections and resolves once the requests and streams in flight have
 * finished — or, past `graceMs`, once the connections still open have been cut (`onGraceOver`
 * hears it). Idle keep-alive connections close at once; the metrics listener closes last.
 */
export function closeListeners(listeners: GatewayListeners, graceMs: number, onGraceOver: () => void): Promise<void> {
  return new Promise((resolve) => {
    const forceTimer = setTimeout(() => {
      onGraceOver();
      listeners.main.closeAllConnections();
    }, graceMs);
    forceTimer.unref();
    listeners.main.close(() => {
      clearTimeout(forceTimer);
      listeners.metrics?.close();
      listeners.metrics?.closeAllConnections();
      resolve();
    });
    listeners.main.closeIdleConnections();
  });
}

function listen(server: Server, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The port a listener is bound to (0 in the config asks the system for a free one). */
export function boundPort(server: Server): number | undefined {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : undefined;
}
