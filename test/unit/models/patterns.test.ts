import { describe, expect, it } from 'vitest';
import { validateConfig } from '../../../src/config/index.js';
import { checkModelLists, ModelList, modelListProblem, patternCovers } from '../../../src/models/index.js';

describe('model patterns (SPEC 21)', () => {
  it('matches names as sent: * is any run of characters, everything else literal, nothing normalised', () => {
    const list = new ModelList(['OpenPipe/*', 'a.b', 'x*']);
    expect(list.allows('OpenPipe/Qwen3-14B-Instruct')).toBe(true);
    expect(list.allows('openpipe/Qwen3')).toBe(false);
    expect(list.allows('aXb')).toBe(false);
    expect(list.allows('x\ny')).toBe(true);
    expect(list.allows('OpenPipe\u2215Qwen')).toBe(false);
    expect(list.allows(' OpenPipe/Qwen')).toBe(false);
    expect(new ModelList([]).allows('anything')).toBe(false);
  });

  it('finds a pattern within a list only when every name it can match is allowed', () => {
    const team = new ModelList(['OpenPipe/Qwen3-14B-Instruct', 'meta-llama/*']);
    expect(team.covers('OpenPipe/Qwen3-14B-Instruct')).toBe(true);
    expect(team.covers('OpenPipe/*')).toBe(false);
    expect(team.covers('meta-llama/Llama-*')).toBe(true);
    expect(team.covers('meta-llama/*')).toBe(true);
    expect(team.covers('*')).toBe(false);
    expect(patternCovers('*', 'a*b')).toBe(true);
    expect(patternCovers('a*', '*a')).toBe(false);
  });

  it('names the entry of a bad list: unknown group, empty pattern, non-string', () => {
    const groups = { base: ['OpenPipe/*'] };
    expect(modelListProblem(['@base', 'x'], groups, 'models')).toBeUndefined();
    expect(modelListProblem(['x', '@nope'], groups, 'teams[0].models')).toBe('teams[0].models[1]: unknown group "@nope" (known: @base)');
    expect(modelListProblem(['x', ''], groups, 'models')).toBe('models[1]: must not be empty');
    expect(modelListProblem([3], groups, 'models')).toBe('models[0]: must be a string (a model name, a pattern with *, or "@group")');
    expect(modelListProblem('x', groups, 'models')).toBe('models: must be a list of model patterns');
  });

  it('refuses a configuration whose lists are bad, in one line with the key path', () => {
    const config = (extra: Record<string, unknown>) => validateConfig({ upstreams: { service: { url: 'http://127.0.0.1:1' }, inference: { url: 'http://127.0.0.1:1' } }, ...extra });
    expect(() => checkModelLists(config({ teams: [{ id: 'team-a', models: ['@missing'] }] }))).toThrow('teams[0].models[0]: unknown group "@missing" (models.groups names none)');
    expect(() => checkModelLists(config({ models: { default: [''] } }))).toThrow('models.default[0]: must not be empty');
    expect(() => config({ models: { groups: { base: [1] } } })).toThrow('config: models.groups.base[0]:');
    expect(() => checkModelLists(config({ models: { groups: { a: ['@b'], b: ['x'] } } }))).toThrow('models.groups.a[0]: a group holds patterns, not other groups');
    expect(() => config({ routes: [{ path: '/v1/training/runs', methods: ['POST'], upstream: 'service', 'checks-model': 'base_model' }] })).toThrow(
      'config: routes[0].checks-model: reads the body whole: needs body: json',
    );
  });
});
