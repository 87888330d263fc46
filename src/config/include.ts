import { readFileSync } from 'node:fs';
import { isAbsolute, resolve } from 'node:path';
import { parseDocument } from 'yaml';

/*
 * `include:` (SPEC 23): a config file names preset files (`config/presets/training-api.yaml`)
 * whose `routes:` go first in the route table, before the file's own. Only routes can be
 * included — a preset is a set of routes an operator takes whole — and includes do not nest.
 * The files are read again on every reload, so a changed preset is a reload away.
 */

/** Where a route of the merged `routes:` came from: its file (undefined: the config file itself) and index there. */
export interface RouteOrigin {
  readonly file: string | undefined;
  readonly index: number;
}

/** A problem with an include: the key path and what is wrong (the caller adds the config file's name). */
export class IncludeProblem extends Error {}

/**
 * Replaces `include:` in a parsed config by the included routes, first, in order. Answers each
 * merged route's origin, so an issue can be named in the file it came from.
 */
export function mergeIncludes(raw: Record<string, unknown>, baseDir: string, expand: (text: string) => string): RouteOrigin[] {
  const own = raw.routes ?? [];
  const include = raw.include ?? [];
  delete raw.include;
  if (!Array.isArray(include) || include.some((entry) => typeof entry !== 'string' || entry === '')) {
    throw new IncludeProblem('include: must be a list of file paths (relative to this file), e.g. [presets/training-api.yaml]');
  }
  if (!Array.isArray(own)) return [];
  const routes: unknown[] = [];
  const origins: RouteOrigin[] = [];
  include.forEach((file: string, i) => {
    const included = routesOf(isAbsolute(file) ? file : resolve(baseDir, file), `include[${i}]`, expand);
    included.forEach((route, index) => {
      routes.push(route);
      origins.push({ file, index });
    });
  });
  own.forEach((route, index) => {
    routes.push(route);
    origins.push({ file: undefined, index });
  });
  if (include.length > 0) raw.routes = routes;
  return origins;
}

/** An included file's routes: a YAML mapping with `routes:` (a list) and nothing else. */
function routesOf(path: string, key: string, expand: (text: string) => string): unknown[] {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new IncludeProblem(`${key}: cannot read ${path} (${code === 'ENOENT' ? 'no such file' : code ?? 'error'})`);
  }
  const doc = parseDocument(expand(text), { prettyErrors: false });
  if (doc.errors.length > 0) throw new IncludeProblem(`${key}: ${path}: invalid YAML: ${doc.errors[0]!.message.split('\n')[0]}`);
  const parsed: unknown = doc.toJS();
  const keys = parsed !== null && typeof parsed === 'object' && !Array.isArray(parsed) ? Object.keys(parsed) : undefined;
  const routes = (parsed as { routes?: unknown } | null)?.routes;
  if (!keys || keys.some((k) => k !== 'routes') || !Array.isArray(routes)) {
    throw new IncludeProblem(`${key}: ${path}: an included file holds only routes: (a list), nothing else`);
  }
  return routes;
}

/** An issue's key path (`routes[3].path`) named where the route was written (`presets/training-api.yaml: routes[1].path`). */
export function whereWritten(issuePath: string, origins: readonly RouteOrigin[]): string {
  const at = /^routes\[(\d+)\](.*)$/.exec(issuePath);
  const origin = at ? origins[Number(at[1])] : undefined;
  if (!at || !origin) return issuePath;
  const local = `routes[${origin.index}]${at[2]}`;
  return origin.file === undefined ? local : `include ${origin.file}: ${local}`;
}
