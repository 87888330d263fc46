import type { RequestHandler } from 'express';
import type { ConfigStatus } from '../config/index.js';
import { invalidQuery } from '../admin-requests/index.js';

/** What a reload answers (SPEC 12.2). */
export interface ReloadResult {
  readonly status: 'reloaded';
  readonly changed: readonly string[];
  readonly restartRequired: readonly string[];
}

/**
 * Re-reads and applies the config file; rejects with 400 invalid_config (nothing changed) when
 * it is not valid. It records the reload in the audit log itself, as SIGHUP's are.
 */
export type Reload = (actor: string, requestId: string, actorRole?: string) => Promise<ReloadResult>;

/** `POST /admin/config/reload` (SPEC 12.2): what changed, and what waits for a restart. */
export const reloadHandler = ({ reload }: { readonly reload: Reload }): RequestHandler => async (_req, res) => {
  const admin = res.locals.admin as { id: string; role: string };
  res.json(await reload(admin.id, String(res.getHeader('x-request-id')), admin.role));
};

/** `GET /admin/config` (SPEC 17, the console's Settings): the running configuration's source, load time, last reload, restart-only changes. */
export const configStatusHandler = ({ configStatus }: { readonly configStatus: ConfigStatus }): RequestHandler => (req, res, next) => {
  for (const name of Object.keys(req.query as Record<string, unknown>)) return next(invalidQuery(name, `Unknown query parameter "${name}"; /admin/config takes none.`));
  res.json(configStatus.view());
};
