import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, storeMode, type Config } from '../config/index.js';

/**
 * How many processes serve the port: `server.workers`, `auto` being one per core. Several
 * workers with the memory store are refused (ConfigError): each would count on its own, and a
 * client's limits would multiply by the number of workers.
 */
export function workerCount(config: Pick<Config, 'server' | 'redis'>): number {
  const { workers } = config.server;
  const count = workers === 'auto' ? availableParallelism() : workers;
  if (count > 1 && storeMode(config.redis) === 'memory') {
    throw new ConfigError(
      `server.workers: ${String(workers)} (${count} processes) needs redis.url or redis.cluster: with the memory store each worker would count limits on its own`,
    );
  }
  return count;
}

/**
 * Where the workers journal their ledger rows until the database has them: beside the SQLite
 * file, or (PostgreSQL) in the temporary directory under the port, so that a gateway started again
 * on the same file or port writes what the last one left.
 */
export function ledgerJournalDir(config: Pick<Config, 'server' | 'database'>): string {
  return config.database.url === '' ? `${config.database.path}.ledger-journal` : join(tmpdir(), `tollgate-ledger-journal-${config.server.port}`);
}
