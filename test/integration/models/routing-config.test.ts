import { writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../../src/config/index.js';
import { startChatUpstream, type ChatUpstream } from '../../fixtures/chat-upstream.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { writeTempConfig } from '../../helpers/process.js';

const QWEN = 'OpenPipe/Qwen3-14B-Instruct';

/** SPEC 22: the routing tables are refused with their key path at start-up and on reload, and a reload changes them under load. */
describe('model routing configuration', () => {
  let service: ChatUpstream;
  let inference: ChatUpstream;
  let vllm: ChatUpstream;

  beforeAll(async () => {
    [service, inference, vllm] = await Promise.all([startChatUpstream('service', undefined), startChatUpstream('inference', []), startChatUpstream('vllm', [QWEN])]);
  });
  afterAll(async () => {
    await Promise.all([service?.host.close(), inference?.host.close(), vllm?.host.close()]);
  });

  const refusalOf = async (models: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> => {
    try {
      const gw = await startGateway(testConfig({ service: service.host.url, inference: inference.host.url }, { upstreams: { vllm: { url: vllm.host.url } }, models, ...extra }));
      await gw.close();
      return 'started';
    } catch (err) {
      expect(err).toBeInstanceOf(ConfigError);
      return (err as Error).message;
    }
  };

  it.each([
    ['a route naming an unknown upstream', { routes: [{ match: 'OpenPipe/*', upstream: 'vlm' }] }, 'test config: models.routes[0].upstream: unknown upstream "vlm" (configured: service, inference, vllm)'],
    ['an alias cycle', { aliases: { a: 'b', b: 'c', c: 'a' } }, 'models.aliases.a: the aliases form a cycle (a -> b -> c -> a)'],
    [
      'an alias equal to a routed literal name',
      { routes: [{ match: QWEN, upstream: 'vllm' }], aliases: { [QWEN]: 'other/model' } },
      `models.aliases.${QWEN}: "${QWEN}" is the literal name of a models.routes pattern: the alias would shadow that model`,
    ],
    ['a fallback to itself', { fallbacks: { [QWEN]: ['x/y', QWEN] } }, `models.fallbacks.${QWEN}[1]: a model cannot fall back to itself`],
    ['a fallback of an unknown group', { fallbacks: { '@premium': [QWEN] } }, 'models.fallbacks.@premium: unknown model group "@premium"'],
  ])('refuses %s at start-up with the key path', async (_name, models, message) => {
    expect(await refusalOf(models)).toBe(message);
  });

  it('refuses a config route naming an unknown upstream with the key path', async () => {
    const routes = [{ path: '/v1/training/runs', methods: ['POST'], upstream: 'trainer', ownership: 'unguarded' }];
    expect(await refusalOf({}, { routes })).toBe('test config: routes[0].upstream: unknown upstream "trainer" (configured: service, inference, vllm)');
  });

  describe('on reload', () => {
    let gw: RunningGateway;
    let path: string;
    const yaml = (upstream: string, aliases = '{}'): string =>
      [
        'server: { host: 127.0.0.1 }',
        `upstreams: { service: { url: "${service.host.url}" }, inference: { url: "${inference.host.url}" }, vllm: { url: "${vllm.host.url}" } }`,
        `auth: { keys: ${JSON.stringify(KEY_ENTRIES)}, admin: { keys: ${JSON.stringify(ADMIN_ENTRIES)} } }`,
        'logging: { level: silent }',
        `models: { routes: [ { match: "OpenPipe/*", upstream: ${upstream} } ], aliases: ${aliases} }`,
        '',
      ].join('\n');
    const reload = (): Promise<Response> => fetch(`${gw.url}/admin/config/reload`, { method: 'POST', headers: { authorization: bearer(KEYS.admin) } });
    const ask = async (): Promise<number> =>
      (
        await fetch(`${gw.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: bearer(KEYS.teamA), 'content-type': 'application/json' },
          body: JSON.stringify({ model: QWEN, messages: [{ role: 'user', content: 'hi' }] }),
        })
      ).status;

    beforeAll(async () => {
      path = writeTempConfig(yaml('vllm'));
      gw = await startGateway(loadConfig(path), path);
    });
    afterAll(async () => gw?.close());

    it('moves a model to another upstream under load with no failed request', async () => {
      const statuses: number[] = [];
      let reloading = true;
      const load = Promise.all(
        Array.from({ length: 4 }, async () => {
          while (reloading) statuses.push(await ask());
        }),
      );
      const before = [vllm.chats().length, inference.chats().length];
      for (const upstream of ['inference', 'vllm', 'inference', 'vllm', 'inference']) {
        writeFileSync(path, yaml(upstream));
        expect((await reload()).status).toBe(200);
        statuses.push(await ask());
      }
      reloading = false;
      await load;
      expect(statuses.length).toBeGreaterThan(5);
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
      expect(vllm.chats().length).toBeGreaterThan(before[0]!);
      expect(inference.chats().length).toBeGreaterThan(before[1]!);
      const last = inference.chats().length;
      expect(await ask()).toBe(200);
      expect(inference.chats().length).toBe(last + 1);
    });

    it('refuses a reload with an alias cycle (400, key path) and keeps the running tables', async () => {
      writeFileSync(path, yaml('vllm', '{ a: b, b: a }'));
      const res = await reload();
      expect(res.status).toBe(400);
      expect(((await res.json()) as { error: Record<string, unknown> }).error).toMatchObject({ code: 'invalid_config', message: `${path}: models.aliases.a: the aliases form a cycle (a -> b -> a)` });
      const last = inference.chats().length;
      expect(await ask()).toBe(200);
      expect(inference.chats().length).toBe(last + 1);
    });
  });
});
