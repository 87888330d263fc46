import { writeFileSync } from 'node:fs';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../../src/config/index.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';

/** SPEC 21: model lists are reloadable, and a reload with a bad list is refused with the key path, changing nothing. */
describe('model lists on reload', () => {
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;
  let path: string;
  const yaml = (teamModels: string): string =>
    [
      'server: { host: 127.0.0.1 }',
      `upstreams: { service: { url: "${service.url}" }, inference: { url: "${inference.url}" } }`,
      `auth: { keys: ${JSON.stringify(KEY_ENTRIES)}, admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} } }`,
      'logging: { level: silent }',
      'models: { groups: { llama: ["meta-llama/*"] } }',
      `teams: [ { id: team-a, models: ${teamModels} } ]`,
      '',
    ].join('\n');
  const chat = async (): Promise<number> =>
    (await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).send({ model: QWEN, messages: [{ role: 'user', content: 'hi' }] })).status;
  const reload = () => request(gw.url).post('/admin/config/reload').set('authorization', bearer(KEYS.admin));

  beforeAll(async () => {
    [service, inference] = await Promise.all([startTrainingService(), startInferenceHost()]);
    path = writeTempConfig(yaml('["@llama"]'));
    gw = await startGateway(loadConfig(path), path);
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([service?.close(), inference?.close()]);
  });

  it('applies a changed team list to new requests', async () => {
    expect(await chat()).toBe(404);
    writeFileSync(path, yaml('["@llama", "OpenPipe/*"]'));
    expect((await reload()).status).toBe(200);
    expect(await chat()).toBe(200);
  });

  it('refuses a list naming an unknown group with the key path, and keeps the running lists', async () => {
    writeFileSync(path, yaml('["@nope"]'));
    const res = await reload();
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ code: 'invalid_config', message: `${path}: teams[0].models[0]: unknown group "@nope" (known: @llama)` });
    expect(await chat()).toBe(200);
  });
});
