/**
 * Model patterns (SPEC 21): `*` matches any run of characters (as prices match), everything
 * else literally — a model name is compared as the upstream decodes it from the JSON body,
 * byte for byte, never normalised. A list is compiled once: a set of exact names plus the
 * prepared wildcard patterns, and a per-name cache of answers.
 */

/** Distinct model names whose answer a list remembers (model names come from clients). */
const MAX_CACHED_NAMES = 10_000;

/** `*` is any run of characters, newlines included (`s`): a name with odd bytes is matched as sent. */
function wildcardRegExp(pattern: string): RegExp {
  const source = pattern
    .split('*')
    .map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
    .join('.*');
  return new RegExp(`^${source}$`, 's');
}

/** One scope's list, compiled: what `allows` answers is cached per model name. */
export class ModelList {
  readonly allowsAll: boolean;
  private readonly exact: ReadonlySet<string>;
  private readonly wildcards: readonly RegExp[];
  private readonly cache = new Map<string, boolean>();

  /** `patterns` are resolved (no `@group` left) and valid (checkModelList). */
  constructor(readonly patterns: readonly string[]) {
    this.allowsAll = patterns.includes('*');
    this.exact = new Set(patterns.filter((p) => !p.includes('*')));
    this.wildcards = patterns.filter((p) => p.includes('*')).map(wildcardRegExp);
  }

  allows(model: string): boolean {
    if (this.allowsAll) return true;
    let answer = this.cache.get(model);
    if (answer === undefined) {
      answer = this.exact.has(model) || this.wildcards.some((w) => w.test(model));
      if (this.cache.size >= MAX_CACHED_NAMES) this.cache.clear();
      this.cache.set(model, answer);
    }
    return answer;
  }

  /**
   * Whether every name `pattern` can match is allowed here (a team-admin's narrowing, SPEC 21):
   * a literal is within when allowed; a wildcard pattern when one pattern of this list covers
   * it. Sound, not complete: `a*` is not found within `[ab*, a]` though every name is — a
   * refusal the admin mends by naming the narrower patterns.
   */
  covers(pattern: string): boolean {
    if (!pattern.includes('*')) return this.allows(pattern);
    return this.patterns.some((own) => patternCovers(own, pattern));
  }
}

/** Whether glob `outer` matches every name glob `inner` matches: inner's `*` can only be taken by outer's `*`. */
export function patternCovers(outer: string, inner: string): boolean {
  const memo = new Map<number, boolean>();
  const walk = (i: number, j: number): boolean => {
    const key = i * (inner.length + 1) + j;
    const known = memo.get(key);
    if (known !== undefined) return known;
    let result: boolean;
    if (i === outer.length) result = j === inner.length;
    else if (outer[i] === '*') result = walk(i + 1, j) || (j < inner.length && walk(i, j + 1));
    else result = j < inner.length && inner[j] !== '*' && inner[j] === outer[i] && walk(i + 1, j + 1);
    memo.set(key, result);
    return result;
  };
  return walk(0, 0);
}
