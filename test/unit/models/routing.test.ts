import { describe, expect, it } from 'vitest';
import { ModelRouter, modelRoutingProblem } from '../../../src/models/index.js';

const config = {
  groups: { premium: ['openai/*'] },
  routes: [
    { match: 'OpenPipe/*', upstream: 'vllm' },
    { match: 'OpenPipe/Qwen3-14B-Instruct', upstream: 'never' },
    { match: '*', upstream: 'inference' },
  ],
  aliases: { fast: 'OpenPipe/Qwen3-14B-Instruct', quicker: 'fast' },
  fallbacks: { '@premium': ['OpenPipe/Qwen3-14B-Instruct'], 'openai/gpt-5': ['meta-llama/x', 'openai/gpt-5-mini'], 'OpenPipe/*': ['OpenPipe/a', 'OpenPipe/b'] },
};

describe('ModelRouter (SPEC 22)', () => {
  const router = new ModelRouter(config);

  it('sends a model to the first route that matches; with no route, to service', () => {
    expect(router.resolve('OpenPipe/Qwen3-14B-Instruct').upstream).toBe('vllm');
    expect(router.resolve('meta-llama/x').upstream).toBe('inference');
    expect(new ModelRouter({ groups: {}, routes: [], aliases: {}, fallbacks: {} }).resolve('anything').upstream).toBe('service');
  });

  it('resolves an alias (through a chain) to its target and the target\'s route', () => {
    expect(router.resolve('quicker')).toEqual({ requested: 'quicker', model: 'OpenPipe/Qwen3-14B-Instruct', upstream: 'vllm', aliased: true, fallbacks: ['OpenPipe/a', 'OpenPipe/b'] });
  });

  it('answers the same route object for the same name (compiled once, cached)', () => {
    expect(router.resolve('meta-llama/x')).toBe(router.resolve('meta-llama/x'));
  });

  it('takes a literal fallback key before a pattern or group, and never lists a model as its own fallback', () => {
    expect(router.resolve('openai/gpt-5').fallbacks).toEqual(['meta-llama/x', 'openai/gpt-5-mini']);
    expect(router.resolve('openai/o3').fallbacks).toEqual(['OpenPipe/Qwen3-14B-Instruct']);
    expect(router.resolve('OpenPipe/a').fallbacks).toEqual(['OpenPipe/b']);
  });

  it('lists the upstreams chat may go to (service only when no route catches everything)', () => {
    expect(router.chatUpstreams()).toEqual(['vllm', 'never', 'inference']);
    expect(new ModelRouter({ ...config, routes: [{ match: 'a/*', upstream: 'vllm' }] }).chatUpstreams()).toEqual(['vllm', 'service']);
  });

  it('finds nothing wrong with a sound table', () => {
    expect(modelRoutingProblem(config)).toBeUndefined();
  });

  it.each([
    ['a fallback that is a group', { fallbacks: { a: ['@premium'] } }, 'models.fallbacks.a[0]: a fallback names one model, not a group ("@premium")'],
    ['a fallback that is a pattern', { fallbacks: { a: ['b/*'] } }, 'models.fallbacks.a[0]: a fallback names one model, not a pattern ("b/*")'],
    ['a self-alias', { aliases: { a: 'a' } }, 'models.aliases.a: the aliases form a cycle (a -> a)'],
  ])('refuses %s with its key path', (_name, change, message) => {
    expect(modelRoutingProblem({ ...config, ...change })).toBe(message);
  });
});
