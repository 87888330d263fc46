/**
 * Model names are a namespace (SPEC 13.1): a model is known by `entity/project/name`, the path
 * of a `wandb-artifact:///<entity>/<project>/<name>[:<version>]` name and the parts of a
 * creation body.
 */

const ARTIFACT_PREFIX = 'wandb-artifact:///';

/** `entity/project/name` of a `wandb-artifact:///` model name (its version cut), or undefined for other names. */
export function artifactOfModelName(model: string): string | undefined {
  if (!model.startsWith(ARTIFACT_PREFIX)) return undefined;
  const path = model.slice(ARTIFACT_PREFIX.length);
  const colon = path.indexOf(':');
  const parts = (colon === -1 ? path : path.slice(0, colon)).split('/');
  return parts.length === 3 && parts.every((part) => part !== '') ? parts.join('/') : undefined;
}

const isName = (value: unknown): value is string => typeof value === 'string' && value !== '' && !value.includes('/');

/**
 * `entity/project/name` of a model creation body or answer (`{entity?, project, name}`);
 * `defaultEntity` stands in for an absent entity (the upstream account's, learned from its answers).
 */
export function artifactOfCreation(body: unknown, defaultEntity?: string): string | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  const { entity, project, name } = body as Record<string, unknown>;
  const owner = entity === undefined || entity === null ? defaultEntity : entity;
  return isName(owner) && isName(project) && isName(name) ? `${owner}/${project}/${name}` : undefined;
}
