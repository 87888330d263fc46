import pino from 'pino';
import request from 'supertest';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { databaseUnavailable } from '../../../src/admin/index.js';
import { errors } from '../../../src/errors.js';
import { createMetrics, type Metrics } from '../../../src/observability/index.js';
import { seriesValue } from '../../helpers/gateway.js';
import { jsonLineSink } from '../../helpers/log-lines.js';
import { serveHandlers } from './serve-handlers.js';

/**
 * The operations app's one error middleware: a failure of ours is a 500 whose stack goes to the
 * log (no API call can make one: a bug stands behind it, so a handler here throws on purpose); a
 * client's error is its 4xx and logs nothing; a database outage also counts in
 * tollgate_database_errors_total.
 */
describe('the operations app’s error rendering', () => {
  const lines: Array<Record<string, unknown>> = [];
  let metrics: Metrics;
  let server: Awaited<ReturnType<typeof serveHandlers>>;

  beforeAll(async () => {
    metrics = createMetrics();
    server = await serveHandlers(
      (app) => {
        app.get('/bug', () => {
          throw new TypeError('reading a field of undefined');
        });
        app.get('/database', (_req, _res, next) => next(databaseUnavailable()));
        app.get('/missing', (_req, _res, next) => next(errors.keyNotFound('k-1')));
      },
      { logger: pino({ level: 'info' }, jsonLineSink(lines)), metrics },
    );
  });
  afterAll(() => server.close());
  beforeEach(() => {
    lines.length = 0;
  });

  const databaseErrors = async (): Promise<number> => seriesValue((await metrics.render()).body, 'tollgate_database_errors_total');

  it('answers a failure of its own 500 and logs it with its stack and path', async () => {
    const res = await request(server.url).get('/bug');
    expect([res.status, res.body]).toEqual([500, { error: { message: 'The gateway failed to handle this request; it has been logged.', type: 'server_error', param: null, code: 'internal_error' } }]);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 50, msg: 'unhandled error', path: '/bug', err: { type: 'TypeError', message: 'reading a field of undefined' } });
    expect((lines[0]!.err as { stack: string }).stack).toContain('TypeError: reading a field of undefined\n    at ');
    expect(await databaseErrors()).toBe(0);
  });

  it('answers a client error with its status and logs nothing', async () => {
    const res = await request(server.url).get('/missing');
    expect([res.status, res.body]).toEqual([404, { error: { message: 'No key with id "k-1".', type: 'not_found_error', param: 'id', code: 'key_not_found' } }]);
    expect(lines).toEqual([]);
    expect(await databaseErrors()).toBe(0);
  });

  it('answers a database outage 503 and counts it, once per request', async () => {
    const before = await databaseErrors();
    const res = await request(server.url).get('/database');
    expect([res.status, res.body]).toEqual([503, databaseUnavailable().toBody()]);
    expect(await databaseErrors()).toBe(before + 1);
    expect(lines).toEqual([]);
  });
});
