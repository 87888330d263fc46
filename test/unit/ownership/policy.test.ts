import { describe, expect, it } from 'vitest';
import type { Config } from '../../../src/config/index.js';
import { mayUse, ownershipPolicy, type OwnershipPolicy } from '../../../src/ownership/index.js';
import type { ResourceRecord } from '../../../src/store/index.js';

type PolicyInput = Pick<Config, 'ownership' | 'upstreams'>;

/** Only the fields ownershipPolicy reads; the rest of a Config plays no part in the decision. */
function input(mode: 'auto' | 'on' | 'off', auth: unknown): PolicyInput {
  return { ownership: { mode, scope: 'team', unknown: 'deny' }, upstreams: { service: { auth } } } as unknown as PolicyInput;
}

const owner = (team: string, project: string): ResourceRecord => ({ kind: 'model', id: 'm-1', team, project, artifact: null, createdAt: '2026-01-01T00:00:00.000Z' });
const policy = (scope: 'team' | 'project'): OwnershipPolicy => ({ enabled: true, scope, unknown: 'deny' });

describe('ownershipPolicy', () => {
  it('is on with mode on, whatever the upstream auth', () => {
    expect(ownershipPolicy(input('on', undefined)).enabled).toBe(true);
  });

  it('is off with mode off, even when the gateway sends its own bearer', () => {
    expect(ownershipPolicy(input('off', { bearer: 'svc' })).enabled).toBe(false);
  });

  it('with mode auto, is on exactly when the gateway replaces the key (auth: { bearer })', () => {
    expect(ownershipPolicy(input('auto', { bearer: 'svc' })).enabled).toBe(true);
    expect(ownershipPolicy(input('auto', undefined)).enabled).toBe(false);
    expect(ownershipPolicy(input('auto', 'passthrough')).enabled).toBe(false);
  });

  it('carries scope and unknown over', () => {
    const config = { ownership: { mode: 'on', scope: 'project', unknown: 'allow' }, upstreams: { service: {} } } as unknown as PolicyInput;
    expect(ownershipPolicy(config)).toEqual({ enabled: true, scope: 'project', unknown: 'allow' });
  });
});

describe('mayUse', () => {
  it('team scope: any project of the owning team, no other team', () => {
    expect(mayUse(policy('team'), owner('team-a', 'rl'), { team: 'team-a', project: 'rl' })).toBe(true);
    expect(mayUse(policy('team'), owner('team-a', 'rl'), { team: 'team-a', project: 'vision' })).toBe(true);
    expect(mayUse(policy('team'), owner('team-a', 'rl'), { team: 'team-b', project: 'rl' })).toBe(false);
  });

  it('project scope: only the owning team and project; the same project name in another team is not it', () => {
    expect(mayUse(policy('project'), owner('team-a', 'rl'), { team: 'team-a', project: 'rl' })).toBe(true);
    expect(mayUse(policy('project'), owner('team-a', 'rl'), { team: 'team-a', project: 'vision' })).toBe(false);
    expect(mayUse(policy('project'), owner('team-a', 'rl'), { team: 'team-b', project: 'rl' })).toBe(false);
  });
});
