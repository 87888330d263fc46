/*
 * The grammar of a route template (SPEC 20, 23), in one place: the config check, the table's
 * matcher, the overlap check and the parameter reader all read templates through it.
 *
 *   /v1/training/runs/{run_id}/*           literal and {param} segments, optionally a trailing /*
 *   /v1/training/runs/{run_id}:close       a custom method: the last segment is {param}:verb ...
 *   /v1/training/runs:resolve              ... or name:verb
 */

export interface TemplateSegment {
  /** The literal text, or the parameter's name for a `{param}` segment. */
  readonly text: string;
  readonly param: boolean;
  /** The custom method's verb (`close` of `{run_id}:close`), only ever on the last segment. */
  readonly verb?: string;
}

export interface ParsedTemplate {
  readonly segments: readonly TemplateSegment[];
  /** Ends in `/*`: the rest of the path, possibly nothing. */
  readonly rest: boolean;
}

const LITERAL = /^[A-Za-z0-9._~!$&'()+,;=@-]+$/;
const PARAM = /^\{([A-Za-z_][A-Za-z0-9_]{0,62})\}$/;
/** A verb is a word (Google AIP-136: `close`, `cancel`, `batchGet`): nothing a path or a regex could read twice. */
const VERB = /^[A-Za-z][A-Za-z0-9_]{0,62}$/;

/** A template's segments (the template must be one templateProblem accepts). */
export function parseTemplate(template: string): ParsedTemplate {
  const rest = template.endsWith('/*');
  const body = rest ? template.slice(0, -2) : template;
  const segments = body
    .slice(1)
    .split('/')
    .map((segment): TemplateSegment => {
      const colon = segment.indexOf(':');
      const base = colon === -1 ? segment : segment.slice(0, colon);
      const verb = colon === -1 ? undefined : segment.slice(colon + 1);
      const param = PARAM.exec(base);
      const text = param ? param[1]! : base;
      return verb === undefined ? { text, param: param !== null } : { text, param: param !== null, verb };
    });
  return { segments, rest };
}

/** The custom method's verb of a template (its last segment's), if it has one. */
export const verbOf = (template: string): string | undefined => parseTemplate(template).segments.at(-1)?.verb;

/** What is wrong with a template, if anything: the message a config error carries after the key path. */
export function templateProblem(path: string): string | undefined {
  if (!path.startsWith('/v1/')) return 'must start with /v1/ (config routes live under /v1)';
  const rest = path.endsWith('/*');
  const raw = (rest ? path.slice(0, -2) : path).slice(1).split('/');
  const names = new Set<string>();
  for (const [i, segment] of raw.entries()) {
    if (segment === '..' || segment === '.') return 'must not contain a "." or ".." segment';
    if (segment === '') return 'must not contain an empty segment (//) or end with /';
    const colon = segment.indexOf(':');
    const base = colon === -1 ? segment : segment.slice(0, colon);
    if (colon !== -1) {
      const problem = verbProblem(segment, segment.slice(colon + 1), i === raw.length - 1 && !rest);
      if (problem) return problem;
    }
    const param = PARAM.exec(base);
    if (!param && !LITERAL.test(base)) return `segment "${segment}" must be a literal (no %, *, ?, #) or a {name} parameter`;
    if (param) {
      if (names.has(param[1]!)) return `parameter {${param[1]}} appears twice`;
      names.add(param[1]!);
    }
  }
  return undefined;
}

/** A `:verb`: only on the last segment (no `/*` after it), a word, never a parameter. */
function verbProblem(segment: string, verb: string, last: boolean): string | undefined {
  if (!last) return `segment "${segment}": a ":verb" (custom method) may only end the template's last segment, with no /* after it`;
  if (PARAM.test(verb) || verb.includes('{')) return `segment "${segment}": a custom method's verb is a fixed word, not a {parameter}`;
  if (!VERB.test(verb)) return `segment "${segment}": the verb "${verb}" must be a letter, then letters, digits or _ (one ":verb" per segment)`;
  return undefined;
}

const escapeRegex = (text: string): string => text.replace(/[.*+?^$()|[\]\\{}]/g, '\\$&');

/**
 * A `{param}`'s pattern: one non-empty segment that does not end in `:<verb>` for a verb the
 * table knows, so `/runs/{run_id}/*` never takes `/runs/r1:close` with `run_id = "r1:close"`.
 */
function paramPattern(knownVerbs: ReadonlySet<string>): string {
  if (knownVerbs.size === 0) return '[^/]+';
  const verbs = [...knownVerbs].map(escapeRegex).join('|');
  return `(?:(?!:(?:${verbs})(?:/|$))[^/])+`;
}

/**
 * Compiles a template to a regex once (when a table is built, never per request), to be run on
 * the percent-decoded path: `{param}` is one segment (a named group when `named`); a trailing
 * `/*` is the rest of the path, possibly nothing; a trailing slash is allowed and kept.
 */
export function compileTemplate(template: string, named: boolean, knownVerbs: ReadonlySet<string> = new Set()): RegExp {
  const { segments, rest } = parseTemplate(template);
  const param = paramPattern(knownVerbs);
  const source = segments
    .map(({ text, param: isParam, verb }) => {
      const base = isParam ? (named ? `(?<${text}>${param})` : param) : escapeRegex(text);
      return verb === undefined ? base : `${base}:${escapeRegex(verb)}`;
    })
    .join('/');
  return new RegExp(`^/${source}${rest ? '(?:/.*)?' : '/?'}$`);
}

/**
 * Whether two segments can match the same path segment. A verb must be the same verb; a segment
 * without one never holds another's (a literal has no `:`, a parameter never swallows a known verb).
 */
function segmentsMeet(s: TemplateSegment, t: TemplateSegment): boolean {
  if (s.verb !== t.verb) return false;
  return s.param || t.param || s.text === t.text;
}

/**
 * Whether some path matches both templates (SPEC 20: a config route may not shadow or share a
 * path with a built-in one). Segment by segment; a trailing `/*` meets whatever the other has left.
 */
export function templatesOverlap(a: string, b: string): boolean {
  const x = parseTemplate(a);
  const y = parseTemplate(b);
  const common = Math.min(x.segments.length, y.segments.length);
  for (let i = 0; i < common; i += 1) {
    if (!segmentsMeet(x.segments[i]!, y.segments[i]!)) return false;
  }
  if (x.segments.length === y.segments.length) return true;
  // The longer one's extra segments must fall in the shorter one's `/*`.
  return x.segments.length < y.segments.length ? x.rest : y.rest;
}
