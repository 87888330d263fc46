import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, type ErrorEntry } from '../../src/error-catalogue.js';
import { errors, GatewayError } from '../../src/errors.js';

const entries = Object.entries(ERROR_CATALOGUE) as Array<[name: string, entry: ErrorEntry<unknown[]>]>;

/** The OpenAI `type` each status is answered with (what clients of the OpenAI API switch on). */
function expectedType(status: number): string {
  const named: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 429: 'rate_limit_error' };
  return named[status] ?? (status >= 500 ? 'server_error' : 'invalid_request_error');
}

/** An error of the entry, its arguments filled with placeholders. */
const raised = (name: string, entry: ErrorEntry<unknown[]>): GatewayError =>
  (errors as unknown as Record<string, (...args: unknown[]) => GatewayError>)[name]!(...Array.from({ length: entry.message.length }, () => 'x'));

describe('the error catalogue', () => {
  it.each(entries)('%s answers a 4xx or 5xx', (_name, entry) => {
    expect(entry.status).toBeGreaterThanOrEqual(400);
    expect(entry.status).toBeLessThan(600);
  });

  it.each(entries)('%s has the type its status implies, unless it overrides it', (name, entry) => {
    const error = raised(name, entry);
    expect(error).toBeInstanceOf(GatewayError);
    expect([error.status, error.code]).toEqual([entry.status, entry.code]);
    if (entry.type === undefined) expect(error.type).toBe(expectedType(entry.status));
    else expect(entry.type).not.toBe(expectedType(entry.status)); // an override that changes nothing is noise
  });

  it('gives each code one status and one type, whichever entry raises it', () => {
    const answers = new Map<string, Set<string>>();
    for (const [name, entry] of entries) {
      const error = raised(name, entry);
      answers.set(entry.code, (answers.get(entry.code) ?? new Set()).add(`${error.status} ${error.type}`));
    }
    const mixed = [...answers].filter(([, seen]) => seen.size > 1).map(([code, seen]) => `${code}: ${[...seen].join(' / ')}`);
    expect(mixed).toEqual([]);
  });

  it('has an entry for each code of docs/errors.md, and docs/errors.md has each code sent to a client', () => {
    const docs = readFileSync(new URL('../../docs/errors.md', import.meta.url), 'utf8');
    const codes = new Set(entries.map(([, entry]) => entry.code));
    // Never sent as such: a failed chat body answers FastAPI's 422 body instead.
    expect([...codes].filter((code) => code !== 'validation_failed' && !docs.includes(`\`${code}\``))).toEqual([]);
    const documented = [...docs.matchAll(/^\| \d{3} \| ([^|]+) \|/gm)].flatMap((row) => [...row[1]!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!));
    expect(documented.filter((code) => !codes.has(code))).toEqual([]);
  });

  it('renders the bodies and headers clients have always seen', () => {
    const keyMissing = errors.keyNotFound('k-1');
    expect(keyMissing.renderBody()).toBe('{"error":{"message":"No key with id \\"k-1\\".","type":"not_found_error","param":"id","code":"key_not_found"}}');
    expect(keyMissing.headers).toEqual({});
    const wrongMethod = errors.methodNotAllowed('PUT', '/v1/models', 'GET, HEAD');
    expect([wrongMethod.status, wrongMethod.message, wrongMethod.headers]).toEqual([405, 'PUT is not allowed on /v1/models; use GET, HEAD.', { allow: 'GET, HEAD' }]);
    expect(errors.overloaded().headers).toEqual({ 'retry-after': '1', connection: 'close' });
    expect(errors.bodyTooLarge(1024).headers).toEqual({ connection: 'close' });
    const refused = errors.resourceNotFound('training job', 'job-1', 'job_id');
    expect(refused.toBody()).toEqual({ error: { message: 'No training job "job-1" was found for this team.', type: 'not_found_error', param: 'job_id', code: 'resource_not_found' } });
    const limited = errors.insufficientQuota('Budget reached.', { 'retry-after': '60' });
    expect([limited.status, limited.code, limited.type, limited.headers]).toEqual([429, 'insufficient_quota', 'rate_limit_error', { 'retry-after': '60' }]);
  });
});
