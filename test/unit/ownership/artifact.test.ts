import { describe, expect, it } from 'vitest';
import { artifactOfCreation, artifactOfModelName } from '../../../src/ownership/index.js';

// The owner of a model is looked up by this path: a name read one character short, or a path
// of the wrong depth read as valid, would look up (or register) another model's owner.
describe('artifactOfModelName', () => {
  it('reads entity/project/name whole when there is no version', () => {
    expect(artifactOfModelName('wandb-artifact:///team-a/rl/policy')).toBe('team-a/rl/policy');
  });

  it('cuts the version after the colon', () => {
    expect(artifactOfModelName('wandb-artifact:///team-a/rl/policy:v3')).toBe('team-a/rl/policy');
  });

  it('is undefined for names outside the artifact namespace', () => {
    expect(artifactOfModelName('gpt-4o')).toBeUndefined();
    expect(artifactOfModelName('team-a/rl/policy')).toBeUndefined();
    // As long as the prefix, with a valid path after it: only the prefix makes it an artifact.
    expect(artifactOfModelName('hf-artifact:///xyzteam-a/rl/policy')).toBeUndefined();
  });

  it('is undefined for a path of two or four parts', () => {
    expect(artifactOfModelName('wandb-artifact:///team-a/policy')).toBeUndefined();
    expect(artifactOfModelName('wandb-artifact:///team-a/rl/policy/extra')).toBeUndefined();
    expect(artifactOfModelName('wandb-artifact:///team-a/rl/policy/extra:v1')).toBeUndefined();
  });

  it('is undefined when a part is empty', () => {
    expect(artifactOfModelName('wandb-artifact:///team-a//policy')).toBeUndefined();
    expect(artifactOfModelName('wandb-artifact:////rl/policy')).toBeUndefined();
    expect(artifactOfModelName('wandb-artifact:///team-a/rl/:v1')).toBeUndefined();
  });
});

describe('artifactOfCreation', () => {
  it('uses the body entity when there is one', () => {
    expect(artifactOfCreation({ entity: 'team-a', project: 'rl', name: 'policy' }, 'acct')).toBe('team-a/rl/policy');
  });

  it('uses the default entity for an absent or null entity', () => {
    expect(artifactOfCreation({ project: 'rl', name: 'policy' }, 'acct')).toBe('acct/rl/policy');
    expect(artifactOfCreation({ entity: null, project: 'rl', name: 'policy' }, 'acct')).toBe('acct/rl/policy');
  });

  it('is undefined without any entity', () => {
    expect(artifactOfCreation({ project: 'rl', name: 'policy' })).toBeUndefined();
  });

  it('is undefined when any part is not a plain name', () => {
    expect(artifactOfCreation({ entity: 'team-a', project: 'rl/x', name: 'policy' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 'team-a', project: '', name: 'policy' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 'team-a', project: 7, name: 'policy' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 'team-a', project: 'rl', name: 'a/b' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 'team-a', project: 'rl' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 'a/b', project: 'rl', name: 'policy' })).toBeUndefined();
    expect(artifactOfCreation({ entity: 42, project: 'rl', name: 'policy' }, 'acct')).toBeUndefined();
  });

  it('is undefined for a body that is not an object', () => {
    expect(artifactOfCreation(null, 'acct')).toBeUndefined();
    expect(artifactOfCreation('team-a/rl/policy', 'acct')).toBeUndefined();
  });
});
