import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type Express, type RequestHandler } from 'express';
import pino from 'pino';
import { renderErrors } from '../../../src/admin/index.js';
import { createMetrics } from '../../../src/observability/index.js';

/**
 * Scope for a handler under test, from test-only request headers: `x-admin: <id>:<role>` sets the
 * admin principal, `x-team-scope: <team>` the team a role's access narrows it to (what
 * requireAdmin and authorize set in the app).
 */
const actingAs: RequestHandler = (req, res, next) => {
  const [id, role] = String(req.headers['x-admin'] ?? '').split(':');
  if (id) res.locals.admin = { id, role };
  if (typeof req.headers['x-team-scope'] === 'string') res.locals.teamScope = req.headers['x-team-scope'];
  next();
};

/** Where the app's error rendering logs 500s and counts database errors (by default: nowhere a test reads). */
export type ErrorRenderingDeps = Parameters<typeof renderErrors>[0];

/** Admin handlers on a bare Express app on a free loopback port, with the app's own error rendering. */
export async function serveHandlers(
  mount: (app: Express) => void,
  rendering: ErrorRenderingDeps = { logger: pino({ level: 'silent' }), metrics: createMetrics() },
): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(actingAs);
  mount(app);
  app.use(renderErrors(rendering));
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
