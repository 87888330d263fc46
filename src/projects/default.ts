/**
 * The project a request without the project header runs as (SPEC 6.2). It is always one the key
 * could name in the header, so leaving the header out never gets around a project's limits.
 */

/** What a key that may use it runs as without the header, when it names no default. */
export const DEFAULT_PROJECT = 'default';

/** Whether a key with these projects may use `project` (`*`: any of its team's). */
export function mayUseProject(projects: Iterable<string>, project: string): boolean {
  for (const allowed of projects) if (allowed === '*' || allowed === project) return true;
  return false;
}

/**
 * A key's default project: the one it names, which must be among its projects; else `default`
 * when it may use it; else its first project. Undefined when the named one is not among its
 * projects (or it has none): the configuration or admin call naming it is refused.
 */
export function defaultProjectOf(projects: readonly string[], named?: string): string | undefined {
  if (named !== undefined) return mayUseProject(projects, named) ? named : undefined;
  if (mayUseProject(projects, DEFAULT_PROJECT)) return DEFAULT_PROJECT;
  return projects[0];
}

/** Why a named default project is refused, as config errors and the admin API say it. */
export function defaultProjectRefusal(projects: readonly string[], named: string, remedy: string): string {
  return `"${named}" is not one of the key's projects (${projects.join(', ')}); ${remedy}`;
}
