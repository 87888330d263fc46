import { createGateway, type Gateway } from './app.js';
import { ConfigError, loadConfig } from './config/index.js';
import { boundPort, closeListeners, openListeners } from './server.js';

/** Start and stop only: load config, build the gateway, listen, reload on SIGHUP, drain on SIGTERM/SIGINT. */
async function main(): Promise<void> {
  const configPath = process.env.TOLLGATE_CONFIG ?? 'config/default.yaml';
  const gateway = await buildOrExit(configPath);
  const { config, logger } = gateway;
  const listeners = await openListeners(gateway);
  logger.info({ host: config.server.host, port: boundPort(listeners.main), config: configPath }, 'tollgate listening');
  if (listeners.metrics) logger.info({ port: boundPort(listeners.metrics), path: config.metrics.path }, 'metrics listening');

  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    const graceMs = gateway.config.server.shutdownGraceMs;
    logger.info({ signal, graceMs }, 'draining');
    // One deadline for the whole shutdown: in-flight requests, then usage, all within the grace period.
    const deadline = Date.now() + graceMs;
    gateway.startDraining();
    void closeListeners(listeners, graceMs, () => logger.warn('grace period over: closing remaining connections'))
      .then(() => gateway.close(deadline))
      .finally(() => {
        logger.info('stopped');
        process.exit(0);
      });
  };
  process.on('SIGHUP', () => {
    // The outcome is logged (and audited) by reload itself; an invalid file keeps the running config.
    gateway.reload('SIGHUP', 'SIGHUP').catch((err: unknown) => logger.error({ err: (err as Error).message }, 'configuration reload refused'));
  });
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}

/** The gateway, or exit 1 with the one-line message of a bad config (never a stack trace). */
async function buildOrExit(configPath: string): Promise<Gateway> {
  try {
    return await createGateway(loadConfig(configPath), { configPath });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    // Load errors name the file already; errors found while building (a bad PEM key) do not.
    const message = err.message.startsWith(`${configPath}: `) ? err.message : `${configPath}: ${err.message}`;
    process.stderr.write(`tollgate: ${message}\n`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
