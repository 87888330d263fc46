import express, { type ErrorRequestHandler } from 'express';
import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { createAdminUsageHandler } from '../../../src/admin/usage.js';
import { GatewayError } from '../../../src/errors.js';
import { MODEL } from '../metering/chat-fixtures.js';
import { buildUsageStore, usage, usageConfig } from '../metering/usage-fixtures.js';

const config = usageConfig();

function buildApp(): express.Express {
  const store = buildUsageStore(config, { onStoreError: () => undefined });
  store.record(usage({}));
  store.record(usage({ day: '2025-06-02', model: 'Qwen/Qwen3-8B', prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 }));
  store.record(usage({ team: 'team-b', project: 'research', keyId: 'notebook' }));
  const app = express();
  app.get('/admin/usage', createAdminUsageHandler(store));
  app.use(((err, _req, res, _next) => {
    const error = err instanceof GatewayError ? err : new GatewayError(500, 'internal_error', 'unexpected');
    res.status(error.status).json(error.toBody());
  }) satisfies ErrorRequestHandler);
  return app;
}

describe('GET /admin/usage', () => {
  it('answers the usage list grouped by team and project', async () => {
    const res = await request(buildApp()).get('/admin/usage?from=2025-06-01&to=2025-06-30');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      object: 'list',
      data: [
        { team: 'team-a', project: 'prod', requests: 2, prompt_tokens: 125, completion_tokens: 53, total_tokens: 178 },
        { team: 'team-b', project: 'research', requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
      ],
    });
  });

  it('groups by model and filters by team', async () => {
    const res = await request(buildApp()).get('/admin/usage').query({ from: '2025-06-01', to: '2025-06-02', team: 'team-a', groupBy: 'model' });
    expect(res.body.data).toEqual([
      { team: 'team-a', project: 'prod', model: 'Qwen/Qwen3-8B', requests: 1, prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 },
      { team: 'team-a', project: 'prod', model: MODEL, requests: 1, prompt_tokens: 25, completion_tokens: 3, total_tokens: 28 },
    ]);
  });

  it('answers an empty list for a range without usage', async () => {
    const res = await request(buildApp()).get('/admin/usage?from=2024-01-01&to=2024-01-31&groupBy=day');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ object: 'list', data: [] });
  });

  it('answers 400 invalid_query naming the parameter for a bad query', async () => {
    const res = await request(buildApp()).get('/admin/usage?from=2025-06-01&to=2025-06-30&groupBy=region');
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: {
        message: 'Query parameter "groupBy" must be model, key or day, got "region".',
        type: 'invalid_request_error',
        param: 'groupBy',
        code: 'invalid_query',
      },
    });
  });

  it('answers 400 for a repeated parameter', async () => {
    const res = await request(buildApp()).get('/admin/usage?from=2025-06-01&from=2025-06-02&to=2025-06-30');
    expect(res.status).toBe(400);
    expect(res.body.error.param).toBe('from');
  });

  it('answers 400 for an unknown parameter', async () => {
    const res = await request(buildApp()).get('/admin/usage?from=2025-06-01&to=2025-06-30&key=ci-bot');
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ param: 'key', code: 'invalid_query' });
  });
});
