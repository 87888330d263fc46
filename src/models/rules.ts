import type { ModelsConfig } from '../config/index.js';
import { ModelList } from './patterns.js';

/**
 * What is wrong with a list of model patterns, or undefined (SPEC 21): one rule for the config
 * file (start-up and reload) and the admin API. `path` names the list (`teams[0].models`); the
 * answer names the entry (`teams[0].models[1]: unknown group "@x"`).
 */
export function modelListProblem(list: unknown, groups: Readonly<Record<string, readonly string[]>>, path: string): string | undefined {
  if (!Array.isArray(list)) return `${path}: must be a list of model patterns`;
  for (const [i, entry] of list.entries()) {
    if (typeof entry !== 'string') return `${path}[${i}]: must be a string (a model name, a pattern with *, or "@group")`;
    if (entry.trim() === '') return `${path}[${i}]: must not be empty`;
    if (entry.startsWith('@') && !Object.hasOwn(groups, entry.slice(1))) {
      const known = Object.keys(groups);
      return `${path}[${i}]: unknown group "${entry}" (${known.length === 0 ? 'models.groups names none' : `known: ${known.map((g) => `@${g}`).join(', ')}`})`;
    }
  }
  return undefined;
}

/**
 * The `models:` section compiled once per configuration: groups resolved, the default list
 * compiled, and each scope's list compiled once per list object (a key's or team's list is a new
 * object only when it changes), so a request pays map probes, never a compilation.
 */
export class ModelRules {
  readonly default: ModelList;
  private readonly compiled = new WeakMap<readonly string[], ModelList>();
  /** JWT claims arrive as a new array per token: compiled lists by their joined text (bounded). */
  private readonly byText = new Map<string, ModelList>();

  constructor(readonly config: Pick<ModelsConfig, 'groups' | 'default'>) {
    this.default = new ModelList(this.resolve(config.default));
  }

  get groups(): Readonly<Record<string, readonly string[]>> {
    return this.config.groups;
  }

  /** A scope's own list, compiled; undefined (no list of its own): the default. */
  listOf(patterns: readonly string[] | null | undefined): ModelList {
    if (patterns === undefined || patterns === null) return this.default;
    let list = this.compiled.get(patterns);
    if (!list) {
      list = new ModelList(this.resolve(patterns));
      this.compiled.set(patterns, list);
    }
    return list;
  }

  /** A list made per request (a JWT claim): cached by its text. */
  listOfClaim(patterns: readonly string[]): ModelList {
    const text = patterns.join('\n');
    let list = this.byText.get(text);
    if (!list) {
      list = new ModelList(this.resolve(patterns));
      if (this.byText.size >= 10_000) this.byText.clear();
      this.byText.set(text, list);
    }
    return list;
  }

  /** `@group` entries replaced by their patterns; an unknown group (a claim's) allows nothing. */
  resolve(patterns: readonly string[]): string[] {
    return patterns.flatMap((p) => (p.startsWith('@') ? [...(this.config.groups[p.slice(1)] ?? [])] : [p]));
  }
}
