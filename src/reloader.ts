import type { AuditTrail, ReloadResult } from './admin/index.js';
import { applicableConfig, ConfigError, type ConfigStatus, diffConfig, loadConfig } from './config/index.js';
import { errors } from './errors.js';
import type { PartList } from './lifecycle.js';
import type { LiveConfiguration } from './live.js';
import type { Logger, Metrics } from './observability/index.js';

export interface ReloadDeps {
  readonly logger: Logger;
  readonly metrics: Metrics;
  readonly trail: AuditTrail;
  /** What GET /admin/config shows: each reload's outcome. */
  readonly status: ConfigStatus;
}

/**
 * Re-reads the config file and hands the applicable configuration to every part; an invalid
 * file (or one the live configuration cannot be built from) changes nothing and is a 400.
 */
export function reloader(configPath: string | undefined, live: LiveConfiguration, parts: PartList, deps: ReloadDeps) {
  // `echo`: another cluster worker did this reload and recorded it (audit, counter); this one only applies it.
  return async (actor: string, requestId: string, actorRole?: string, echo = false): Promise<ReloadResult> => {
    try {
      if (configPath === undefined) throw new ConfigError('this gateway was not started from a config file: nothing to reload');
      const next = loadConfig(configPath);
      const { changed, restartRequired } = diffConfig(live.current.config, next);
      await parts.reconfigure(applicableConfig(live.current.config, next));
      if (!echo) deps.metrics.recordConfigReload('ok');
      if (!echo) deps.trail.record(actor, 'config.reload', 'config', 'ok', requestId, actorRole);
      deps.status.applied(restartRequired);
      deps.logger.info({ changed, restartRequired }, 'configuration reloaded');
      return { status: 'reloaded', changed, restartRequired };
    } catch (err) {
      if (!echo) deps.metrics.recordConfigReload('error');
      const message = err instanceof ConfigError ? (configPath === undefined ? err.message : err.inFile(configPath)) : `the configuration could not be applied: ${(err as Error).message}`;
      if (!echo) deps.trail.record(actor, 'config.reload', 'config', 'invalid_config', requestId, actorRole);
      deps.status.refused(message);
      throw errors.invalidConfig(message);
    }
  };
}
