import type { RequestHandler } from 'express';
import type { UsageStore } from '../metering/index.js';
import { parseUsageQuery } from './usage-query.js';

/**
 * `GET /admin/usage` (SPEC 7). Admin auth runs before it. Answers
 * `{"object":"list","data":[rows]}`; a bad query (GatewayError 400 `invalid_query`) or an
 * unreadable store (503) goes to the error middleware.
 */
export function createAdminUsageHandler(store: UsageStore): RequestHandler {
  return async (req, res, next) => {
    try {
      const query = parseUsageQuery(req.query as Record<string, unknown>);
      const data = await store.query(query);
      res.json({ object: 'list', data });
    } catch (err) {
      next(err);
    }
  };
}
