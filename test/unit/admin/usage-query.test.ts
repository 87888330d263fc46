import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { csvRequested, parseLedgerPageQuery, parseUsageQuery } from '../../../src/admin/index.js';
import { gatewayRejection } from '../../helpers/refusals.js';

function rejection(query: Record<string, unknown>): { status: number; code: string; param: string | null; message: string } {
  try {
    parseUsageQuery(query);
    csvRequested(query);
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { status: err.status, code: err.code, param: err.param, message: err.message };
  }
  throw new Error('expected parseUsageQuery to throw');
}

describe('parseUsageQuery', () => {
  it('accepts a day range with filters and a groupBy', () => {
    expect(parseUsageQuery({ from: '2025-06-01', to: '2025-06-30', team: 'team-a', project: 'rl.prod_2', groupBy: 'model' })).toEqual({
      from: '2025-06-01',
      to: '2025-06-30',
      team: 'team-a',
      project: 'rl.prod_2',
      groupBy: 'model',
    });
    expect(parseUsageQuery({ from: '2025-06-01', to: '2025-06-01' })).toEqual({ from: '2025-06-01', to: '2025-06-01' });
  });

  it('accepts a whole leap year (366 days)', () => {
    expect(parseUsageQuery({ from: '2024-01-01', to: '2024-12-31' })).toEqual({ from: '2024-01-01', to: '2024-12-31' });
  });

  it('answers 400 invalid_query naming "to" when the range covers 367 days', () => {
    expect(rejection({ from: '2023-01-01', to: '2024-01-02' })).toEqual({
      status: 400,
      code: 'invalid_query',
      param: 'to',
      message: 'The range from 2023-01-01 to 2024-01-02 covers 367 days; at most 366 are allowed.',
    });
  });

  it('answers 400 naming "from" when from is after to', () => {
    expect(rejection({ from: '2025-06-02', to: '2025-06-01' })).toMatchObject({
      status: 400,
      param: 'from',
      message: 'Query parameter "from" (2025-06-02) is after "to" (2025-06-01).',
    });
  });

  it.each([
    [{ to: '2025-06-01' }, 'from', 'Query parameter "from" is required (a UTC day, YYYY-MM-DD).'],
    [{ from: '2025-06-01' }, 'to', 'Query parameter "to" is required (a UTC day, YYYY-MM-DD).'],
    [{ from: '2025-02-30', to: '2025-03-01' }, 'from', 'Query parameter "from" must be a calendar day as YYYY-MM-DD, got "2025-02-30".'],
    [{ from: '2025-06-01', to: '2025-6-2' }, 'to', 'Query parameter "to" must be a calendar day as YYYY-MM-DD, got "2025-6-2".'],
    [{ from: '2025-06-01T00:00:00Z', to: '2025-06-02' }, 'from', 'Query parameter "from" must be a calendar day as YYYY-MM-DD, got "2025-06-01T00:00:00Z".'],
    [{ from: ['2025-06-01', '2025-06-02'], to: '2025-06-02' }, 'from', 'Query parameter "from" must be given once, as a plain value.'],
    [{ from: '2025-06-01', to: '2025-06-02', groupBy: 'team' }, 'groupBy', 'Query parameter "groupBy" must be one of model, key, day, month, route, got "team".'],
    [{ from: '2025-06-01', to: '2025-06-02', format: 'xml' }, 'format', 'Query parameter "format" must be csv or json, got "xml".'],
    [{ from: '2025-06-01', to: '2025-06-02', key: 'a b' }, 'key', 'Query parameter "key" must be a key id (visible ASCII, at most 200 characters).'],
    [{ from: '2025-06-01', to: '2025-06-02', team: '' }, 'team', 'Query parameter "team" must be 1-128 of [A-Za-z0-9._-], got "".'],
    [{ from: '2025-06-01', to: '2025-06-02', project: 'a/b' }, 'project', 'Query parameter "project" must be 1-128 of [A-Za-z0-9._-], got "a/b".'],
    [{ from: '2025-06-01', to: '2025-06-02', model: 'x' }, 'model', 'Unknown query parameter "model"; use from, to, team, project, key, groupBy, format.'],
  ])('answers 400 invalid_query for %j', (query, param, message) => {
    expect(rejection(query)).toEqual({ status: 400, code: 'invalid_query', param, message });
  });

  it('accepts groupBy month and route, and a key filter (SPEC 7)', () => {
    expect(parseUsageQuery({ from: '2025-06-01', to: '2025-06-30', key: 'ci-bot', groupBy: 'month' })).toEqual({ from: '2025-06-01', to: '2025-06-30', key: 'ci-bot', groupBy: 'month' });
    expect(parseUsageQuery({ from: '2025-06-01', to: '2025-06-30', groupBy: 'route' }).groupBy).toBe('route');
  });

  it('asks for CSV with format=csv only: format=json and no format are JSON', () => {
    const range = { from: '2025-06-01', to: '2025-06-02' };
    expect([csvRequested({ ...range, format: 'csv' }), csvRequested({ ...range, format: 'json' }), csvRequested(range)]).toEqual([true, false, false]);
  });

  it('renders as an OpenAI invalid_request_error body', () => {
    const err = (() => {
      try {
        parseUsageQuery({ from: 'yesterday', to: '2025-06-01' });
      } catch (e) {
        return e as GatewayError;
      }
      throw new Error('expected a throw');
    })();
    expect(err.toBody()).toEqual({
      error: {
        message: 'Query parameter "from" must be a calendar day as YYYY-MM-DD, got "yesterday".',
        type: 'invalid_request_error',
        param: 'from',
        code: 'invalid_query',
      },
    });
  });
});

describe('parseLedgerPageQuery', () => {
  const page = (extra: Record<string, unknown>) => parseLedgerPageQuery({ from: '2025-06-01', to: '2025-06-02', ...extra });
  const limitRefusal = (limit: string) => ({
    status: 400,
    code: 'invalid_query',
    param: 'limit',
    message: `Query parameter "limit" must be a whole number from 1 to 1000, got "${limit}".`,
    headers: {},
  });

  it('takes 100 rows by default, a limit from 1 to 1000, and the cursor as given', () => {
    expect(page({})).toStrictEqual({ from: '2025-06-01', to: '2025-06-02', limit: 100 });
    expect(page({ limit: '1' }).limit).toBe(1);
    expect(page({ limit: '1000', after: 'cursor-1' })).toEqual({ from: '2025-06-01', to: '2025-06-02', limit: 1000, after: 'cursor-1' });
  });

  it.each(['0', '1001', '-1', '1.5', '1e2', ' 5', '5 ', 'x5', '5x', ''])('refuses limit %j', async (limit) => {
    expect(await gatewayRejection(() => page({ limit }))).toEqual(limitRefusal(limit));
  });
});
