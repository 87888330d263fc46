import cluster from 'node:cluster';
import { createGateway } from './app.js';
import { joinPrimary, ledgerJournalDir, startPrimary, workerCount } from './cluster/index.js';
import { ConfigError, loadConfig } from './config/index.js';
import { createLogger } from './observability/index.js';
import { boundPort, closeListeners, openListeners } from './server.js';

/**
 * Start and stop only: load config, build the gateway, listen, reload on SIGHUP, drain on
 * SIGTERM/SIGINT. With `server.workers` above 1 this process is the cluster's primary and
 * the gateway runs in the workers it forks (src/cluster/).
 */
async function main(): Promise<void> {
  const configPath = process.env.TOLLGATE_CONFIG ?? 'config/default.yaml';
  const config = await orExit(configPath, () => loadConfig(configPath));
  const workers = await orExit(configPath, () => workerCount(config));
  if (cluster.isPrimary && workers > 1) return startPrimary({ workers, logger: createLogger(config.logging.level), journalDir: ledgerJournalDir(config) });
  const link = cluster.isWorker ? joinPrimary(config) : undefined;
  const gateway = await orExit(configPath, () => createGateway(config, { configPath, ...link?.options }));
  const { logger } = gateway;
  const listeners = await openListeners(gateway);
  logger.info({ host: config.server.host, port: boundPort(listeners.main), config: configPath }, 'tollgate listening');
  if (listeners.metrics) logger.info({ port: boundPort(listeners.metrics), path: config.metrics.path }, 'metrics listening');
  link?.ready(gateway);

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

/** `work`'s result, or exit 1 with the one-line message of a bad config (never a stack trace). */
async function orExit<T>(configPath: string, work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    process.stderr.write(`tollgate: ${err.inFile(configPath)}\n`);
    process.exit(1);
  }
}

main().catch((err: unknown) => {
  process.stderr.write(`tollgate: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
  process.exit(1);
});
