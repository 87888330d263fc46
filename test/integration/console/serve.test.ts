import { get, type IncomingMessage } from 'node:http';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';

const SECURITY = {
  'content-security-policy': "default-src 'self'; frame-ancestors 'none'",
  'referrer-policy': 'no-referrer',
  'x-content-type-options': 'nosniff',
};
const INDEX = '<!doctype html><title>console</title><script type="module" src="/console/assets/index-abc123.js"></script>';
const SCRIPT = `console.log(${JSON.stringify('x'.repeat(2000))});`;

/** A console build as Vite lays it out: index.html, hashed assets/, unhashed public files. */
function fakeBuild(): string {
  const dir = mkdtempSync(join(tmpdir(), 'tollgate-console-'));
  mkdirSync(join(dir, 'assets'));
  writeFileSync(join(dir, 'index.html'), INDEX);
  writeFileSync(join(dir, 'assets', 'index-abc123.js'), SCRIPT);
  writeFileSync(join(dir, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  return dir;
}

describe('the console is served at /console/ (SPEC 17)', () => {
  let upstreams: FakeUpstream[];
  let gw: RunningGateway;
  let bare: RunningGateway;
  beforeAll(async () => {
    upstreams = await Promise.all([startTrainingService(), startInferenceHost()]);
    const config = testConfig({ service: upstreams[0]!.url, inference: upstreams[1]!.url });
    gw = await startGateway(config, undefined, { consoleDir: fakeBuild() });
    bare = await startGateway(testConfig({ service: upstreams[0]!.url, inference: upstreams[1]!.url }), undefined, { consoleDir: join(tmpdir(), 'no-console-build-here') });
  });
  afterAll(async () => {
    await Promise.all([gw.close(), bare.close()]);
    await Promise.all(upstreams.map((upstream) => upstream.close()));
  });

  it('answers index.html with the security headers and no-cache', async () => {
    const res = await request(gw.url).get('/console/').set('accept-encoding', 'identity');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ ...SECURITY, 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-cache' });
    expect(res.text).toBe(INDEX);
  });

  it('answers hashed assets cached for a year, gzipped when the client takes gzip', async () => {
    // node:http, not supertest: superagent would gunzip the body before the test sees it.
    const res = await new Promise<IncomingMessage>((resolve, reject) => get(`${gw.url}/console/assets/index-abc123.js`, { headers: { 'accept-encoding': 'gzip' } }, resolve).on('error', reject));
    const body = Buffer.concat(await res.toArray());
    expect(res.statusCode).toBe(200);
    expect(res.headers).toMatchObject({ ...SECURITY, 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=31536000, immutable', 'content-encoding': 'gzip', vary: 'accept-encoding', 'content-length': String(body.length) });
    expect(gunzipSync(body).toString()).toBe(SCRIPT);
  });

  it('answers unhashed files with no-cache, and HEAD without a body', async () => {
    const res = await request(gw.url).head('/console/favicon.svg').set('accept-encoding', 'identity');
    expect(res.status).toBe(200);
    expect(res.headers).toMatchObject({ ...SECURITY, 'content-type': 'image/svg+xml', 'cache-control': 'no-cache', 'content-length': '41' });
    expect(res.text).toBeUndefined();
  });

  it('redirects /console to /console/', async () => {
    const res = await request(gw.url).get('/console?x=1');
    expect(res.status).toBe(301);
    expect(res.headers.location).toBe('/console/');
  });

  it('answers 405 naming GET and HEAD for a write to a console file', async () => {
    const res = await request(gw.url).post('/console/');
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('GET, HEAD');
    expect(res.body).toEqual({ error: { message: 'POST is not allowed on /console/; use GET, HEAD.', type: 'invalid_request_error', param: null, code: 'method_not_allowed' } });
  });

  it('leaves a path that is not a console file to the gateway (404 as for any unknown path)', async () => {
    const res = await request(gw.url).get('/console/assets/nope.js');
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: { message: 'No route for GET /console/assets/nope.js.', type: 'not_found_error', param: null, code: 'not_found' } });
  });

  it('serves no console when there is no build', async () => {
    const res = await request(bare.url).get('/console/');
    expect(res.status).toBe(404);
    expect(res.headers['content-security-policy']).toBeUndefined();
  });
});
