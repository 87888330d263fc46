import type { ProjectRef } from '../auth/index.js';
import type { Config } from '../config/index.js';
import type { ResourceRecord } from '../store/index.js';

/** How ownership is enforced (SPEC 13), decided once per configuration. */
export interface OwnershipPolicy {
  readonly enabled: boolean;
  readonly scope: 'team' | 'project';
  readonly unknown: 'deny' | 'allow';
}

/**
 * `mode: auto` turns ownership on exactly when the gateway replaces the client's key with its
 * own (`upstreams.service.auth: { bearer }`): then every team shares one upstream account, and
 * the gateway is the only thing that can tell their models and jobs apart.
 */
export function ownershipPolicy(config: Pick<Config, 'ownership' | 'upstreams'>): OwnershipPolicy {
  const { mode, scope, unknown } = config.ownership;
  const enabled = mode === 'on' || (mode === 'auto' && typeof config.upstreams.service.auth === 'object');
  return { enabled, scope, unknown };
}

/** Whether a caller (its team/project) may use a recorded resource, by the policy's scope. */
export function mayUse(policy: OwnershipPolicy, owner: ResourceRecord, caller: ProjectRef): boolean {
  if (owner.team !== caller.team) return false;
  return policy.scope === 'team' || owner.project === caller.project;
}
