import type { ProjectRef } from '../auth/index.js';
import { errors, GatewayError } from '../errors.js';
import { jsonPointerText, valueAt, type JsonPointer } from '../json-pointer.js';
import type { Logger, Metrics } from '../observability/index.js';
import type { ResourceKind } from '../store/index.js';
import { artifactOfCreation, artifactOfModelName } from './artifact.js';
import { readModelNameFields } from './owner-fields.js';
import { mayUse, type OwnershipPolicy } from './policy.js';
import type { OwnershipRegistry } from './registry.js';

/** How a message names a kind: `training_job` is a "training job", a config route's `run` a "run". */
export const nounOf = (kind: ResourceKind): string => kind.replaceAll('_', ' ');

/** The one answer for another team's resource and for none at all: nothing tells them apart. */
function notFound(kind: ResourceKind, id: string, param: string): GatewayError {
  return errors.resourceNotFound(nounOf(kind), id, param);
}

const parseJson = (raw: Buffer): unknown => {
  try {
    return JSON.parse(raw.toString('utf8'));
  } catch {
    return undefined;
  }
};

/** A resource named in a JSON answer (a route's `creates` / `checks-response`): its kind and where its id is. */
export interface AnsweredId {
  readonly kind: ResourceKind;
  readonly id: JsonPointer;
}

/** Where the answer was heard: the route (named in the warning when a creation's id is missing). */
export interface AnswerOrigin {
  readonly route: string;
}

/** The id at the pointer of a parsed answer: a non-empty string, else undefined. */
const idAt = (body: unknown, pointer: JsonPointer): string | undefined => {
  const id = valueAt(body, pointer);
  return typeof id === 'string' && id !== '' ? id : undefined;
};

/** The error's `param` for an id read from an answer: its field's name (`run_id` of `/run_id`). */
const paramOf = (pointer: JsonPointer): string => pointer.at(-1) ?? 'id';

/**
 * The ownership checks (SPEC 13): the caller may only use, train on and name models and jobs
 * its team (or, by `scope`, its project) created. Every check reads the registry's memory;
 * refusals count in `tollgate_ownership_denials_total{kind}`.
 */
export class OwnershipGuard {
  constructor(
    readonly policy: OwnershipPolicy,
    private readonly registry: OwnershipRegistry,
    private readonly metrics: Metrics,
    private readonly logger?: Pick<Logger, 'warn'>,
  ) {}

  /** A resource named in a path or a body: 404 resource_not_found unless the caller may use it. */
  async checkResource(kind: ResourceKind, id: string, caller: ProjectRef, param: string): Promise<void> {
    const owner = await this.registry.ownerOf(kind, id);
    const allowed = owner ? mayUse(this.policy, owner, caller) : this.policy.unknown === 'allow';
    if (allowed) return;
    this.metrics.recordOwnershipDenial(kind);
    throw notFound(kind, id, param);
  }

  /** A chat with another team's `wandb-artifact:///` model: 404 model_not_found. Other model names pass. */
  checkChatModel(model: string, caller: ProjectRef): void {
    const artifact = artifactOfModelName(model);
    if (artifact === undefined) return;
    const owner = this.registry.ownerOfArtifact(artifact);
    if (!owner || mayUse(this.policy, owner, caller)) return;
    this.metrics.recordOwnershipDenial('model');
    throw errors.modelNotFound(model);
  }

  /**
   * A model creation naming another team's `entity/project/name`: 409 name_in_use; one whose
   * name cannot be read as the upstream will read it: 400. Answers the name it asks for.
   */
  checkModelName(raw: Buffer | undefined, caller: ProjectRef): string | undefined {
    const artifact = artifactOfCreation(readModelNameFields(raw ?? Buffer.alloc(0)), this.registry.defaultEntity);
    if (artifact === undefined) return undefined;
    const owner = this.registry.ownerOfArtifact(artifact);
    if (owner && !mayUse(this.policy, owner, caller)) throw this.nameInUse(artifact);
    return artifact;
  }

  /**
   * Records the resource a 2xx creation answered with (the id at the route's pointer: `/id`,
   * `/run_id`) as the caller's. An answer with no id there is recorded nowhere: a warning naming
   * the route, counted. A model id recorded for another team (`return_existing: true` hands
   * back someone else's model) is never handed out: the answer to send instead is the 409.
   */
  async recordCreation(creation: AnsweredId, answer: Buffer, caller: ProjectRef, requestedArtifact: string | undefined, origin: AnswerOrigin): Promise<GatewayError | undefined> {
    const { kind } = creation;
    const body = parseJson(answer) as Record<string, unknown> | undefined;
    const id = idAt(body, creation.id);
    if (id === undefined) return this.unrecorded(creation, origin);
    if (kind === 'model' && typeof body?.entity === 'string' && (body.entity as string) !== '') this.registry.learnDefaultEntity(body.entity as string);
    const artifact = kind === 'model' ? (artifactOfCreation(body) ?? requestedArtifact ?? null) : null;
    const holder = await this.registry.record({ kind, id, team: caller.team, project: caller.project, artifact, createdAt: new Date().toISOString() });
    if (mayUse(this.policy, holder, caller)) return undefined;
    if (kind === 'model') return this.nameInUse(artifact ?? id);
    this.metrics.recordOwnershipDenial(kind);
    return notFound(kind, id, paramOf(creation.id));
  }

  /**
   * A 2xx answer naming a resource (`checks-response`, a lookup by name on a shared account):
   * the 404 to send instead when it is not the caller's, by the same rule as a path's id. An
   * answer with no id at the pointer names nothing and passes.
   */
  async checkAnswer(named: AnsweredId, answer: Buffer, caller: ProjectRef): Promise<GatewayError | undefined> {
    const id = idAt(parseJson(answer), named.id);
    if (id === undefined) return undefined;
    try {
      await this.checkResource(named.kind, id, caller, paramOf(named.id));
      return undefined;
    } catch (err) {
      if (err instanceof GatewayError) return err;
      throw err;
    }
  }

  private unrecorded(creation: AnsweredId, origin: AnswerOrigin): undefined {
    this.metrics.recordOwnershipUnrecorded(creation.kind);
    this.logger?.warn(
      { route: origin.route, kind: creation.kind, pointer: jsonPointerText(creation.id) },
      `route ${origin.route} answered a creation with no id at ${jsonPointerText(creation.id)}: the ${nounOf(creation.kind)} was not recorded (ownership.unknown decides who may use it)`,
    );
    return undefined;
  }

  release(kind: ResourceKind, id: string): Promise<void> {
    return this.registry.release(kind, id);
  }

  private nameInUse(artifact: string): GatewayError {
    this.metrics.recordOwnershipDenial('model');
    return errors.nameInUse(artifact);
  }
}
