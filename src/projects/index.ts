import { ERROR_CATALOGUE } from '../error-catalogue.js';
import { errors } from '../errors.js';
import { isValidName } from './name.js';

export { isValidName, NAME_PATTERN, NAME_RULE } from './name.js';

export { DEFAULT_PROJECT, defaultProjectOf, defaultProjectRefusal, mayUseProject } from './default.js';

/** The error code of a project the principal may not use (also an auth-failure metric reason). */
export const PROJECT_FORBIDDEN = ERROR_CATALOGUE.projectForbidden.code;

/** The team/project a request is attributed to (from the project header or the default). */
export interface ProjectRef {
  readonly team: string;
  readonly project: string;
}

/** What resolving a project reads of the caller (an auth `Principal` is one): defined here so projects need nothing from auth. */
export interface ProjectRights {
  readonly team: string;
  /** Projects of `team` the caller may use; `*` means any. */
  readonly projects: ReadonlySet<string>;
  readonly defaultProject: string;
}

/**
 * Resolves the team/project a request is attributed to from the `<compat>-Project` header
 * (`<team>/<project>`), or the principal's default project when the header is absent.
 * Throws 400 `invalid_project` for a malformed value, 403 `project_forbidden` when the
 * principal may not use it.
 */
export function resolveProject(principal: ProjectRights, headerValue: string | undefined, headerName: string): ProjectRef {
  if (headerValue === undefined) return { team: principal.team, project: principal.defaultProject };
  const slash = headerValue.indexOf('/');
  const team = slash === -1 ? '' : headerValue.slice(0, slash);
  const project = slash === -1 ? '' : headerValue.slice(slash + 1);
  if (!isValidName(team) || !isValidName(project)) {
    throw errors.invalidProject(headerName);
  }
  if (team !== principal.team) {
    throw errors.projectOfOtherTeam(headerName, principal.team, team);
  }
  if (!principal.projects.has('*') && !principal.projects.has(project)) {
    throw errors.projectForbidden(headerName, team, project);
  }
  return { team, project };
}
