import { readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { IncludeProblem, mergeIncludes, whereWritten, type RouteOrigin } from './include.js';
import { UPSTREAMS } from './upstreams.js';
import { parseDocument } from 'yaml';
import { configSchema, type Config } from './schema.js';
import { firstIssueInWords } from './zod-issue.js';
import { applyOtelEnv } from './tracing.js';

export { ADMIN_ROLES, adminKeyTeamProblem, adminRoleSchema, keyProjects, limitSetSchema, modelPatterns, namePart, storeMode } from './schema.js';

export { RESOURCE_KIND_PATTERN, type RouteConfig } from './routes.js';
export { firstIssueInWords, type IssueInWords } from './zod-issue.js';
export { applicableConfig, diffConfig } from './reload-diff.js';
export { ConfigStatus, type ConfigStatusView, type LastReload } from './status.js';
export { UPSTREAM_NAMES, UPSTREAMS, type UpstreamName } from './upstreams.js';
export type { SamplerName, TracingConfig } from './tracing.js';
export type { OidcSettings } from './console.js';
export { matchesEvent, NOTIFICATION_TYPES, type ExportConfig, type NotificationsConfig, type WebhookConfig } from './notifications.js';
export type { AdminKeyConfig, Config, LimitSet, StaticKeyConfig, TeamConfig, JwtConfig, FailureLimitConfig, UpstreamConfig, ConfigInput, StoreMode, ModelsConfig } from './schema.js';

/** A configuration problem: one line naming the key path and what is wrong. */
export class ConfigError extends Error {
  override name = 'ConfigError';

  /** The message naming the file: load errors name it already; those found while building the gateway from it (a bad PEM key, a route overlapping a built-in one) do not. */
  inFile(path: string): string {
    return this.message.startsWith(`${path}: `) ? this.message : `${path}: ${this.message}`;
  }
}

type Env = Record<string, string | undefined>;

/**
 * Expands `${VAR}` and `${VAR:-default}` in a YAML text. Done on the text, before parsing,
 * so a variable may hold any scalar (a number for a port, a URL, a key).
 */
export function expandEnv(text: string, env: Env): string {
  return text.replace(/\$\{([A-Za-z_][A-Za-z0-9_]*)(?::-([^}]*))?\}/g, (_m, name: string, fallback?: string) => {
    const value = env[name];
    if (value !== undefined && value !== '') return value;
    return fallback ?? '';
  });
}

/** Applies the documented environment overrides (SPEC 2) on top of the parsed YAML. */
function applyOverrides(raw: Record<string, unknown>, env: Env): void {
  const section = (name: string): Record<string, unknown> => {
    const existing = raw[name];
    if (existing && typeof existing === 'object' && !Array.isArray(existing)) return existing as Record<string, unknown>;
    const created: Record<string, unknown> = {};
    raw[name] = created;
    return created;
  };
  const upstream = (name: string): Record<string, unknown> => {
    const ups = section('upstreams');
    const existing = ups[name];
    if (existing && typeof existing === 'object') return existing as Record<string, unknown>;
    const created: Record<string, unknown> = {};
    ups[name] = created;
    return created;
  };
  if (env.HOST) section('server').host = env.HOST;
  if (env.PORT) {
    const port = Number(env.PORT);
    section('server').port = Number.isInteger(port) ? port : env.PORT;
  }
  for (const [name, { urlVariable }] of Object.entries(UPSTREAMS)) {
    const url = env[urlVariable];
    if (url) upstream(name).url = url;
  }
  if (env.REDIS_URL) section('redis').url = env.REDIS_URL;
  if (env.DATABASE_URL) section('database').url = env.DATABASE_URL;
  if (env.LOG_LEVEL) section('logging').level = env.LOG_LEVEL;
  applyOtelEnv(section('tracing'), env);
}

/**
 * Parses and validates a YAML config text; its `include:` files are read relative to `baseDir`
 * (the config file's folder; default the working directory). Throws ConfigError with a one-line message.
 */
export function parseConfig(text: string, env: Env = process.env, source = 'config', baseDir = process.cwd()): Config {
  const doc = parseDocument(expandEnv(text, env), { prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0]!;
    throw new ConfigError(`${source}: invalid YAML: ${first.message.split('\n')[0]}`);
  }
  const parsed: unknown = doc.toJS() ?? {};
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new ConfigError(`${source}: the top level must be a mapping of sections (server, upstreams, auth, ...)`);
  }
  let origins: RouteOrigin[];
  try {
    origins = mergeIncludes(parsed as Record<string, unknown>, baseDir, (included) => expandEnv(included, env));
  } catch (err) {
    if (err instanceof IncludeProblem) throw new ConfigError(`${source}: ${err.message}`);
    throw err;
  }
  applyOverrides(parsed as Record<string, unknown>, env);
  return validateConfig(parsed, source, origins);
}

/** Validates an already-parsed config object (defaults applied). Throws ConfigError. */
export function validateConfig(parsed: unknown, source = 'config', origins: readonly RouteOrigin[] = []): Config {
  const result = configSchema.safeParse(parsed);
  if (!result.success) {
    const issue = firstIssueInWords(result.error, '(root)', 'key');
    throw new ConfigError(`${source}: ${whereWritten(issue.path, origins)}: ${issue.detail}`);
  }
  return result.data;
}

/** Reads the config file (TOLLGATE_CONFIG or the given path) and validates it. */
export function loadConfig(path: string, env: Env = process.env): Config {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new ConfigError(`${path}: cannot read config file (${code === 'ENOENT' ? 'no such file' : code ?? 'error'})`);
  }
  return parseConfig(text, env, path, dirname(path));
}
export { configSchema } from './schema.js';
export { parseOtelHeaders, tracingSchema } from './tracing.js';
