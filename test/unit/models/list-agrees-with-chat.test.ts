import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { ModelAccess, ModelCatalog, ModelListing, ModelRules, type ModelObject } from '../../../src/models/index.js';
import { modelCheckFor, type Caller, type PreparedBody } from '../../../src/pipeline/index.js';
import { ROUTES } from '../../../src/proxy/index.js';

const CHAT = ROUTES.find((route) => route.template === '/v1/chat/completions')!;
const NAMES = ['OpenPipe/Qwen3-14B-Instruct', 'OpenPipe/Qwen3-8B', 'meta-llama/Llama-3.1-8B', 'openai/gpt-5', 'a*b', 'x\u0000y', 'ünï/cødé', 'wandb-artifact:///ent/proj/tuned'];
const PATTERNS = ['*', 'OpenPipe/*', 'meta-llama/*', 'openai/gpt-5', '*-8B', 'a*', 'x*', '@base', '@premium', 'wandb-artifact:///*'];
const GROUPS = { base: ['OpenPipe/*', 'meta-llama/*'], premium: ['openai/*'] };

const list = fc.option(fc.subarray(PATTERNS), { nil: undefined });
const scenario = fc.record({
  upstream: fc.uniqueArray(fc.constantFrom(...NAMES)),
  keyList: list,
  teamList: list,
  defaultList: fc.subarray(PATTERNS.filter((p) => !p.startsWith('@'))),
  kind: fc.constantFrom<'key' | 'jwt'>('key', 'jwt'),
  ownedBy: fc.constantFrom('team-a', 'team-b', undefined),
});

const bodyFor = (model: string): PreparedBody =>
  ({ chat: { model }, open: () => undefined, release: () => undefined, bytes: 0 }) as unknown as PreparedBody;

/** The 404 body a chat with `model` got, or 'admitted'. */
function chatAnswer(check: NonNullable<ReturnType<typeof modelCheckFor>>, caller: Caller, model: string): unknown {
  try {
    check(caller, bodyFor(model));
    return 'admitted';
  } catch (err) {
    return (err as GatewayError).toBody();
  }
}

describe('each caller\'s /v1/models agrees with what chat admits (SPEC 21)', () => {
  it('every listed id is admitted; every unlisted id of the upstream list gets the unknown-model 404 body', async () => {
    await fc.assert(
      fc.asyncProperty(scenario, async (s) => {
        const rules = new ModelRules({ groups: GROUPS, default: s.defaultList });
        const owners = {
          ownerOfArtifact: (artifact: string) => (s.ownedBy && artifact === 'ent/proj/tuned' ? { team: s.ownedBy } : undefined),
          trainedModelsOf: (team: string) => (s.ownedBy === team ? [{ artifact: 'ent/proj/tuned', createdAt: '2026-01-01T00:00:00.000Z' }] : []),
        };
        const access = new ModelAccess(rules, { modelsOf: () => s.teamList }, owners);
        const upstream: ModelObject[] = s.upstream.map((id) => ({ id, object: 'model', created: 0, owned_by: 'system' }));
        const listing = new ModelListing(access, [new ModelCatalog(async () => upstream, 10_000, () => undefined)], owners);
        const check = modelCheckFor(CHAT, { access, listing, metrics: { recordModelDenial: () => undefined, recordOwnershipDenial: () => undefined } })!;
        const caller: Caller = {
          principal: { kind: s.kind, id: 'k', team: 'team-a', projects: new Set(['*']), defaultProject: 'default', limits: {}, models: s.keyList ?? null },
          project: { team: 'team-a', project: 'default' },
        };
        const listed = (await listing.visibleTo(caller, undefined)).map((m) => m.id);
        for (const id of listed) expect(chatAnswer(check, caller, id)).toBe('admitted');
        // A name in no list is decided by the lists alone; a trained model is known to the gateway once recorded.
        const known = s.ownedBy ? [...s.upstream, 'wandb-artifact:///ent/proj/tuned'] : s.upstream;
        for (const id of known.filter((id) => !listed.includes(id))) {
          expect(chatAnswer(check, caller, id)).toEqual({
            error: { message: `The model "${id}" does not exist or you do not have access to it.`, type: 'not_found_error', param: 'model', code: 'model_not_found' },
          });
        }
        // The team's own trained model is always listed; another team's never.
        if (s.ownedBy !== undefined) expect(listed.includes('wandb-artifact:///ent/proj/tuned')).toBe(s.ownedBy === 'team-a');
      }),
      { numRuns: 300 },
    );
  });
});
