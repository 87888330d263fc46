import type { z } from 'zod';

/** The first issue of a failed zod parse in words, as config errors and the admin API's 400s say it. */
export interface IssueInWords {
  /** Where: `limits.rpm`, `projects[1]`, or the caller's name for the whole value. */
  readonly path: string;
  /** What: zod's message, or `unknown <noun>(s) "a", "b"` for keys the schema does not know. */
  readonly detail: string;
  /** The first unknown key, when that is the issue (the admin API names it as the `param`). */
  readonly unknownKey?: string;
}

/** Words for the first issue; `root` names the whole value, `noun` what its keys are called (`key`, `field`). */
export function firstIssueInWords(error: z.ZodError, root: string, noun: string): IssueInWords {
  const issue = error.issues[0]!;
  const path = issue.path.map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`)).join('') || root;
  if (issue.code !== 'unrecognized_keys') return { path, detail: issue.message };
  return { path, detail: `unknown ${noun}(s) ${issue.keys.map((k) => `"${k}"`).join(', ')}`, unknownKey: issue.keys[0] };
}
