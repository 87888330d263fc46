import { createServer, type Server } from 'node:http';
import { createGateway } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';
import { createGatewayServer } from './server.js';

/** Start and stop only: load config, build the gateway, listen, reload on SIGHUP, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const configPath = process.env.TOLLGATE_CONFIG ?? 'config/default.yaml';
  let gateway;
  try {
    gateway = await createGateway(loadConfig(configPath), { configPath });
  } catch (err) {
    if (err instanceof ConfigError) {
      // Load errors name the file already; errors found while building (a bad PEM key) do not.
      const message = err.message.startsWith(`${configPath}: `) ? err.message : `${configPath}: ${err.message}`;
      process.stderr.write(`tollgate: ${message}\n`);
      process.exit(1);
    }
    throw err;
  }
  const { config } = gateway;
  const { logger } = gateway;

  const server = createGatewayServer(config, gateway.handleRequest, gateway.connectionEvents);
  await listen(server, config.server.port, config.server.host);
  logger.info({ host: config.server.host, port: addressPort(server), config: configPath }, 'tollgate listening');

  let metricsServer: Server | undefined;
  if (config.metrics.port !== null) {
    const { path } = config.metrics;
    metricsServer = createServer((req, res) => {
      if (req.method === 'GET' && req.url?.split('?')[0] === path) gateway.metricsHandler(req, res);
      else {
        res.writeHead(404, { 'content-type': 'text/plain' });
        res.end('not found\n');
      }
    });
    await listen(metricsServer, config.metrics.port, config.server.host);
    logger.info({ port: addressPort(metricsServer), path }, 'metrics listening');
  }

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal, graceMs: gateway.config.server.shutdownGraceMs }, 'draining');
    // One deadline for the whole shutdown: in-flight requests, then usage, all within the grace period.
    const deadline = Date.now() + gateway.config.server.shutdownGraceMs;
    gateway.startDraining();
    const forceTimer = setTimeout(() => {
      logger.warn('grace period over: closing remaining connections');
      server.closeAllConnections();
    }, gateway.config.server.shutdownGraceMs);
    forceTimer.unref();
    // close() stops new connections and resolves once in-flight requests and streams are done.
    server.close(() => {
      clearTimeout(forceTimer);
      metricsServer?.close();
      metricsServer?.closeAllConnections();
      gateway.close(deadline).finally(() => {
        logger.info('stopped');
        process.exit(0);
      });
    });
    server.closeIdleConnections();
  };
  process.on('SIGHUP', () => {
    // The outcome is logged (and audited) by reload itself; an invalid file keeps the running config.
    gateway.reload('SIGHUP', 'SIGHUP').catch((err: unknown) => logger.error({ err: (err as Error).message }, 'configuration reload refused'));
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
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

function addressPort(server: Server): number | undefined {
  const address = server.address();
  return typeof address === 'object' && address !== null ? address.port : undefined;
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
