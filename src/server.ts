import { readFileSync } from 'node:fs';
import { createServer, type RequestListener, type Server } from 'node:http';
import type { Config } from './config/index.js';

/** Share of the open-file limit client connections may take: the rest is for upstream pools, Redis, the database and files. */
const CONNECTION_SHARE_OF_FD_LIMIT = 0.8;
/** Where the open-file limit cannot be read (not Linux). */
const FALLBACK_MAX_CONNECTIONS = 10_000;

/** The process's soft open-file limit (RLIMIT_NOFILE), or undefined where /proc cannot tell. */
export function openFileLimit(): number | undefined {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const soft = line?.split(/\s{2,}/)[1];
    const value = Number(soft);
    return Number.isFinite(value) && value > 0 ? value : undefined;
  } catch {
    return undefined;
  }
}

/** `server.maxConnections`, or 80% of the open-file limit when it is not set. */
export function maxConnectionsFor(configured: number | null): number {
  if (configured !== null) return configured;
  const limit = openFileLimit();
  return limit === undefined ? FALLBACK_MAX_CONNECTIONS : Math.max(1, Math.floor(limit * CONNECTION_SHARE_OF_FD_LIMIT));
}

/**
 * The listening HTTP server with the protections of `server.*`: a client must send its
 * headers within headersTimeoutMs (Node then answers 408 and closes; this also closes
 * connections that send nothing), idle keep-alive connections close, headers are bounded,
 * and connections are capped below the open-file limit, so a flood of idle sockets cannot
 * starve the gateway of descriptors for its upstreams. Both timeouts are set explicitly:
 * Node derives headersTimeout from requestTimeout, and a requestTimeout of 0 would turn it off.
 */
export function createGatewayServer(settings: Config['server'], listener: RequestListener): Server {
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
  server.maxConnections = maxConnectionsFor(settings.maxConnections);
  return server;
}
