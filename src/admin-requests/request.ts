import type { Request, RequestHandler } from 'express';
import { z } from 'zod';
import { DAY_MS, dayStart } from '../calendar.js';
import { firstIssueInWords } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';
import { assertNoEncodedNul } from '../proxy/index.js';

/** A key's (or admin key's) expiry: an instant with its offset, stored in UTC; it must lie ahead (a key that expired on creation is a mistake). */
export const expiresAtField = z
  .iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time with an offset, e.g. 2026-12-31T23:59:59Z' })
  .transform((value) => new Date(value).toISOString())
  .refine((value) => Date.parse(value) > Date.now(), 'must be in the future')
  .nullable();

/** The free-text description of a key, admin key or team. */
export const descriptionField = z.string().max(1000, 'must be at most 1000 characters').nullable();

/** The admin API's 400 for a body: `invalid_request`, `param` naming the field. */
export function invalidRequest(param: string, message: string): GatewayError {
  return errors.invalidRequest(param, message);
}

/** The admin API's 400 for a query string: `invalid_query`, `param` naming the parameter. */
export function invalidQuery(param: string, message: string): GatewayError {
  return errors.invalidQuery(param, message);
}

/** Validates a JSON body (already parsed by express.json) or throws 400 naming the first bad field. */
export function parseBody<S extends z.ZodType>(schema: S, req: Request): z.output<S> {
  const body: unknown = req.body ?? {};
  const result = schema.safeParse(body);
  if (result.success) return result.data;
  const issue = firstIssueInWords(result.error, 'body', 'field');
  throw invalidRequest(issue.unknownKey ?? issue.path, `${issue.path}: ${issue.detail}`);
}

/** A query parameter given at most once, as a plain value. */
export function singleParam(query: Record<string, unknown>, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') throw invalidQuery(name, `Query parameter "${name}" must be given once, as a plain value.`);
  return value;
}

/** Refuses query parameters the route does not know. */
export function onlyParams(query: Record<string, unknown>, known: readonly string[]): void {
  for (const name of Object.keys(query)) {
    if (!known.includes(name)) throw invalidQuery(name, `Unknown query parameter "${name}"; use ${known.join(', ')}.`);
  }
}

/** A required UTC day (`YYYY-MM-DD`). */
export function requiredDay(query: Record<string, unknown>, name: string): string {
  const value = singleParam(query, name);
  if (value === undefined) throw invalidQuery(name, `Query parameter "${name}" is required (a UTC day, YYYY-MM-DD).`);
  if (Number.isNaN(dayStart(value))) throw invalidQuery(name, `Query parameter "${name}" must be a calendar day as YYYY-MM-DD, got "${value}".`);
  return value;
}

/** `from` and `to` (inclusive UTC days), `from` not after `to`, at most `maxDays` apart. */
export function dayRange(query: Record<string, unknown>, maxDays: number): { from: string; to: string } {
  const from = requiredDay(query, 'from');
  const to = requiredDay(query, 'to');
  const span = (dayStart(to) - dayStart(from)) / DAY_MS + 1;
  if (span < 1) throw invalidQuery('from', `Query parameter "from" (${from}) is after "to" (${to}).`);
  if (span > maxDays) throw invalidQuery('to', `The range from ${from} to ${to} covers ${span} days; at most ${maxDays} are allowed.`);
  return { from, to };
}

/** An object or array being walked: its members, and how many of them have been looked at. */
interface Walk {
  readonly members: Array<[key: string, value: unknown]>;
  next: number;
}

/** The keys from the body down to the member just looked at, joined: `limits.rpm`. */
const pathOf = (walks: readonly Walk[]): string => walks.map((walk) => walk.members[walk.next - 1]![0]).join('.');

/**
 * The path (`limits.rpm`, `body` for the body itself) of the first string or key holding a NUL,
 * if any. A loop, not recursion: a 64 KB body can nest 30,000 deep, past the call stack, and its
 * path is built only when there is one to name.
 */
function nulPathOf(body: unknown): string | undefined {
  if (typeof body === 'string') return body.includes('\u0000') ? 'body' : undefined;
  if (typeof body !== 'object' || body === null) return undefined;
  const walks: Walk[] = [{ members: Object.entries(body), next: 0 }];
  while (walks.length > 0) {
    const walk = walks[walks.length - 1]!;
    if (walk.next === walk.members.length) {
      walks.pop();
      continue;
    }
    const [key, value] = walk.members[walk.next++]!;
    if (key.includes('\u0000') || (typeof value === 'string' && value.includes('\u0000'))) return pathOf(walks);
    if (typeof value === 'object' && value !== null) walks.push({ members: Object.entries(value), next: 0 });
  }
  return undefined;
}

/**
 * Refuses a NUL (U+0000) wherever an admin request carries one — path, query or JSON body — with
 * a 400 naming where: PostgreSQL's text cannot hold it, so it would otherwise be a 500 there
 * (while SQLite stored it). After the body is read.
 */
export const refuseNul: RequestHandler = (req, _res, next) => {
  const query = req.url.indexOf('?');
  assertNoEncodedNul(query === -1 ? req.url : req.url.slice(0, query));
  if (query !== -1 && req.url.includes('%00', query)) {
    const part = req.url.slice(query + 1).split('&').find((p) => p.includes('%00')) ?? '';
    const name = part.split('=', 1)[0] ?? '';
    return next(invalidQuery(name, `Query parameter "${name}" must not contain NUL (%00).`));
  }
  const at = nulPathOf(req.body);
  next(at === undefined ? undefined : invalidRequest(at, `${at}: must not contain NUL (U+0000)`));
};
