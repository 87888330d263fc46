/** The label value every team/project pair beyond the cardinality limit is reported under. */
export const OTHER_LABEL = '__other__';

export interface TeamProjectLabels {
  readonly team: string;
  readonly project: string;
}

const OTHER: TeamProjectLabels = Object.freeze({ team: OTHER_LABEL, project: OTHER_LABEL });

/**
 * Bounds the team/project label pairs on token metrics (SPEC 8 `metrics.maxTeamProjects`):
 * the first `maxTeamProjects` distinct pairs keep their names for the life of the process;
 * every later pair is reported as `__other__`/`__other__`. Answers the same object per pair,
 * so the hot path allocates nothing once a pair is known.
 */
export function createLabelGuard(maxTeamProjects: number): (team: string, project: string) => TeamProjectLabels {
  const teams = new Map<string, Map<string, TeamProjectLabels>>();
  let admitted = 0;
  return (team, project) => {
    let projects = teams.get(team);
    const known = projects?.get(project);
    if (known !== undefined) return known;
    if (admitted >= maxTeamProjects) return OTHER;
    if (projects === undefined) {
      projects = new Map();
      teams.set(team, projects);
    }
    const labels = Object.freeze({ team, project });
    projects.set(project, labels);
    admitted++;
    return labels;
  };
}
