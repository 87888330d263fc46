import { describe, expect, it } from 'vitest';
import type { Admission } from '../../../src/limits/index.js';
import { admissionDescriber } from '../../../src/pipeline/index.js';

/**
 * The limits span's attributes (src/pipeline/traced.ts): the scopes and limits an admitted
 * request passed, given again while the next request's limits are the same, made anew when they
 * are not.
 */

const admitted = (checks: Admission['checks']): Admission => ({ headers: {}, finish: () => undefined, checks }) as Admission;

describe('the limits span of an admitted request', () => {
  it('names the scopes (each once) and the limits that applied, frozen', () => {
    const describe = admissionDescriber();
    const attributes = describe(admitted([{ scope: 'key', limit: 'rpm' }, { scope: 'team', limit: 'tpm' }, { scope: 'key', limit: 'tokensPerDay' }]));
    expect(attributes).toEqual({
      'tollgate.limits.decision': 'admitted',
      'tollgate.limits.scopes': ['key', 'team'],
      'tollgate.limits.checks': ['key:rpm', 'team:tpm', 'key:tokensPerDay'],
    });
    expect(Object.isFrozen(attributes)).toBe(true);
    expect(Object.isFrozen(attributes['tollgate.limits.checks'])).toBe(true);
  });

  it('is the same object while the limits stay the same, and new ones when they change', () => {
    const describe = admissionDescriber();
    const first = describe(admitted([{ scope: 'key', limit: 'rpm' }]));
    expect(describe(admitted([{ scope: 'key', limit: 'rpm' }]))).toBe(first);
    const other = describe(admitted([{ scope: 'key', limit: 'tpm' }]));
    expect(other['tollgate.limits.checks']).toEqual(['key:tpm']);
    expect(describe(admitted([{ scope: 'project', limit: 'tpm' }]))['tollgate.limits.checks']).toEqual(['project:tpm']);
    expect(describe(admitted([{ scope: 'project', limit: 'tpm' }, { scope: 'team', limit: 'concurrency' }]))['tollgate.limits.checks']).toEqual(['project:tpm', 'team:concurrency']);
    expect(describe(admitted(undefined))).toEqual({ 'tollgate.limits.decision': 'admitted', 'tollgate.limits.scopes': [], 'tollgate.limits.checks': [] });
    expect(describe(admitted([{ scope: 'key', limit: 'rpm' }]))).toEqual(first);
  });
});
