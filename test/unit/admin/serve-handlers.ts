import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import express, { type ErrorRequestHandler, type Express, type RequestHandler } from 'express';
import { asGatewayError, writeError } from '../../../src/errors.js';

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

/** Renders a handler's error as the app does, naming its code for the audit hook. */
const renderError: ErrorRequestHandler = (err, _req, res, _next) => {
  const error = asGatewayError(err);
  res.locals.errorCode = error.code;
  writeError(res, error);
};

/** Admin handlers on a bare Express app on a free loopback port, with the app's error rendering. */
export async function serveHandlers(mount: (app: Express) => void): Promise<{ url: string; close(): Promise<void> }> {
  const app = express();
  app.use(actingAs);
  mount(app);
  app.use(renderError);
  const server = app.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
