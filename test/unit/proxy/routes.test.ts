import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { createRouteTable, resolveRoute, routeOf } from '../../../src/proxy/index.js';

const table = createRouteTable();
const resolve = (method: string, url: string) => resolveRoute(table, method, url);
const failure = (method: string, url: string): GatewayError => {
  try {
    resolve(method, url);
  } catch (err) {
    return err as GatewayError;
  }
  throw new Error(`${method} ${url} resolved`);
};

describe('resolveRoute', () => {
  it.each([
    ['POST', '/v1/chat/completions', '/v1/chat/completions'],
    ['POST', '/v1/chat/completions/', '/v1/chat/completions'],
    ['GET', '/v1/models?x=1', '/v1/models'],
    ['DELETE', '/v1/preview/models/abc', '/v1/preview/models/{model_id}'],
    ['GET', '/v1/preview/models/abc/checkpoints?limit=5', '/v1/preview/models/{model_id}/checkpoints'],
    ['POST', '/v1/preview/models/abc/log', '/v1/preview/models/{model_id}/log'],
    ['POST', '/v1/preview/training-jobs', '/v1/preview/training-jobs'],
    ['POST', '/v1/preview/sft-training-jobs', '/v1/preview/sft-training-jobs'],
    ['GET', '/v1/preview/training-jobs/j-1/events?after=e', '/v1/preview/training-jobs/{training_job_id}/events'],
    ['GET', '/v1/system-check', '/v1/system-check'],
  ])('resolves %s %s to the template %s', (method, url, template) => {
    expect(resolve(method, url).template).toBe(template);
  });

  it('marks training-job creation routes with their kind', () => {
    expect(resolve('POST', '/v1/preview/training-jobs').trainingJobKind).toBe('rl');
    expect(resolve('POST', '/v1/preview/sft-training-jobs').trainingJobKind).toBe('sft');
  });

  it('answers 404 for unknown paths and ids spanning segments', () => {
    expect(failure('GET', '/v1/preview/training-jobs/a/b/events')).toMatchObject({ status: 404, code: 'not_found' });
    expect(failure('GET', '/v2/models')).toMatchObject({ status: 404, message: 'No route for GET /v2/models.' });
  });

  it('answers 405 with Allow listing the methods', () => {
    const error = failure('PATCH', '/v1/preview/models/abc/checkpoints');
    expect(error).toMatchObject({ status: 405, code: 'method_not_allowed', headers: { allow: 'GET, DELETE' } });
  });

  it.each(['/v1/preview/models/..', '/v1/preview/models/%2E%2e/log', '/v1/preview/models/a%2fb/log', '/v1/preview/models/a\\b/log', '/v1/./models'])(
    'answers 400 invalid_path for %s',
    (url) => {
      expect(failure('GET', url)).toMatchObject({ status: 400, code: 'invalid_path' });
    },
  );

  it('allows dots inside an id', () => {
    expect(resolve('DELETE', '/v1/preview/models/qwen-2.5.ckpt').template).toBe('/v1/preview/models/{model_id}');
  });
});

describe('routeOf', () => {
  it('names the template a 405 path matched (its span is named by it), and none for a 404 or 400', () => {
    expect(routeOf(table, 'PATCH', '/v1/preview/models/abc/checkpoints?x=1')).toMatchObject({ template: '/v1/preview/models/{model_id}/checkpoints', refusal: { status: 405 } });
    expect(routeOf(table, 'GET', '/v1/nowhere')).toMatchObject({ template: undefined, refusal: { status: 404, code: 'not_found' } });
    expect(routeOf(table, 'GET', '/v1/preview/models/a%2fb')).toMatchObject({ template: undefined, refusal: { status: 400, code: 'invalid_path' } });
    expect(routeOf(table, 'GET', '/v1/models')).toEqual({ route: table.match('/v1/models', 'GET')!.route });
  });
});
