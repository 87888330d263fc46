import type { Principal, ProjectRef } from '../auth/index.js';
import { artifactOfModelName } from '../ownership/index.js';
import type { ModelList } from './patterns.js';
import type { ModelRules } from './rules.js';

/** Which scope refused a model (`tollgate_model_denials_total{scope}`). */
export type ModelDenialScope = 'key' | 'team' | 'jwt' | 'ownership';
export const MODEL_DENIAL_SCOPES: readonly ModelDenialScope[] = ['key', 'team', 'jwt', 'ownership'];

/** Each team's own list (config or /admin/teams), or null/undefined for none. */
export interface TeamModelLists {
  modelsOf(team: string): readonly string[] | null | undefined;
}

/** Who trained a model (`entity/project/name`), from the ownership registry's memory. */
export interface ArtifactOwners {
  ownerOfArtifact(artifact: string): { readonly team: string } | undefined;
}

/** The caller as the models rule sees it. */
export interface ModelCaller {
  readonly principal: Pick<Principal, 'kind' | 'team' | 'models'>;
  readonly project: ProjectRef;
}

/**
 * The one rule of SPEC 21: whether a caller may use a model. Chat, training bodies,
 * `checks-model` routes and `/v1/models` all ask this, so a list and a call never disagree.
 */
export class ModelAccess {
  constructor(
    readonly rules: ModelRules,
    private readonly teams: TeamModelLists,
    private readonly owners: ArtifactOwners,
    /** Ownership is on (SPEC 13): trained models are listed per team, so no list passes through. */
    private readonly ownershipOn = false,
  ) {}

  /** The scope that refuses `model` to the caller, or undefined when it may use it. */
  refusal(caller: ModelCaller, model: string): ModelDenialScope | undefined {
    const artifact = artifactOfModelName(model);
    if (artifact !== undefined) {
      // A trained model: its team's always, another team's never, whatever the lists say.
      const owner = this.owners.ownerOfArtifact(artifact);
      if (owner) return owner.team === caller.project.team ? undefined : 'ownership';
    }
    const { principal } = caller;
    if (!this.ownList(principal).allows(model)) return principal.kind;
    if (!this.teamList(caller.project.team).allows(model)) return 'team';
    return undefined;
  }

  /**
   * Whether nothing is withheld from the caller: ownership off and every list `*`. Its model
   * list is then the host's own, passed through unchanged (today's behaviour), and a model
   * creation's body streams without being read.
   */
  isOpenTo(caller: ModelCaller): boolean {
    return !this.ownershipOn && this.ownList(caller.principal).allowsAll && this.teamList(caller.project.team).allowsAll;
  }

  /** The key's or token's own list (the default when it has none). */
  ownList(principal: ModelCaller['principal']): ModelList {
    const { models } = principal;
    if (models === undefined || models === null) return this.rules.default;
    return principal.kind === 'jwt' ? this.rules.listOfClaim(models) : this.rules.listOf(models);
  }

  teamList(team: string): ModelList {
    return this.rules.listOf(this.teams.modelsOf(team));
  }
}
