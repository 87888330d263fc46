import { z } from 'zod';
import { upstreamRefusals, upstreamsSchema } from './upstreams.js';
import { modelRoutingShape } from './model-routing.js';
import { LIMIT_KINDS, type LimitName, type LimitSet } from '../limit-kinds/index.js';
import { defaultProjectOf, defaultProjectRefusal, NAME_PATTERN, NAME_RULE } from '../projects/index.js';
import { routesSchema } from './routes.js';
import { tracingSchema } from './tracing.js';
import { consoleSchema } from './console.js';
import { notificationsSchema } from './notifications.js';

/** Byte sizes as written in YAML: a number of bytes or "10mb", "512kb", "1gb". */
const byteSize = z.union([z.number().int().positive(), z.string()]).transform((value, ctx) => {
  if (typeof value === 'number') return value;
  const match = /^(\d+(?:\.\d+)?)\s*(b|kb|mb|gb)?$/i.exec(value.trim());
  if (!match) {
    ctx.addIssue({ code: 'custom', message: `"${value}" is not a size (use e.g. 10mb, 512kb or a number of bytes)` });
    return z.NEVER;
  }
  const units: Record<string, number> = { b: 1, kb: 1024, mb: 1024 ** 2, gb: 1024 ** 3 };
  return Math.floor(Number(match[1]) * units[(match[2] ?? 'b').toLowerCase()]!);
});

const nonNegativeInt = z.number().int().nonnegative();
const positiveInt = z.number().int().positive();
const sha256Hex = z.string().regex(/^[0-9a-fA-F]{64}$/, 'must be a SHA-256 digest: 64 hex characters').transform((s) => s.toLowerCase());
/** A team or project name (SPEC 6.2). */
export const namePart = z.string().regex(NAME_PATTERN, `must be ${NAME_RULE}`);
const projectLimitEntry = new RegExp(`^${NAME_PATTERN.source.slice(1, -1)}/(\\*|${NAME_PATTERN.source.slice(1, -1)})$`);

/** A positive amount of money in the price currency (budgets): at most 9 decimals (counters hold nano-units). */
const currencyAmount = z.number().positive().refine((n) => Number.isSafeInteger(Math.round(n * 1e9)), 'must be at most about 9,000,000');

/**
 * Per-scope limits, one optional field per kind of the limits table (absent = unlimited):
 * whole counts for requests, tokens and in-flight requests, decimals for cost budgets.
 */
export const limitSetSchema: z.ZodType<LimitSet> = z
  .object({
    ...(Object.fromEntries(LIMIT_KINDS.map((kind) => [kind.name, (kind.unit === 'cost' ? currencyAmount : positiveInt).optional()])) as Record<
      LimitName,
      z.ZodOptional<z.ZodNumber>
    >),
    /** The scope's budgets alert and never refuse (SPEC 24). */
    soft: z.boolean().optional(),
  })
  .strict();

/** Per million tokens; the longest matching pattern wins, `*` is a wildcard (SPEC 14). */
const priceSchema = z.object({ prompt: z.number().nonnegative(), completion: z.number().nonnegative() }).strict();
const pricesSchema = z
  .object({
    currency: z.string().regex(/^[A-Z]{3}$/, 'must be an ISO 4217 code such as USD').default('USD'),
    models: z.record(z.string().min(1), priceSchema).nullish().transform((v) => v ?? {}),
  })
  .strict()
  .prefault({});
export type { LimitSet };

/** `memory`: no Redis (one instance); `single`: `redis.url`; `cluster`: `redis.cluster` (wins over url). */
export type StoreMode = 'memory' | 'single' | 'cluster';

/** The one place that decides whether and how Redis is used; everything else asks this. */
export function storeMode(redis: { readonly url: string; readonly cluster?: readonly string[] | undefined }): StoreMode {
  if (redis.cluster !== undefined && redis.cluster.length > 0) return 'cluster';
  return redis.url === '' ? 'memory' : 'single';
}

const upstreamAuthSchema = z.union([
  z.literal('passthrough'),
  z.object({ bearer: z.string().min(1, 'must not be empty') }).strict(),
]);

const upstreamUrl = z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' });

/** One host of an upstream pool (SPEC 19); weight shares the traffic under either balance. */
const upstreamTargetSchema = z
  .object({
    url: upstreamUrl,
    weight: z.number().positive('must be greater than 0').default(1),
  })
  .strict();

const upstreamSchema = z
  .object({
    /** One host; `targets` names several (exactly one of the two). */
    url: upstreamUrl.optional(),
    targets: z.array(upstreamTargetSchema).min(1, 'must name at least one target').optional(),
    balance: z.enum(['least-outstanding', 'round-robin']).default('least-outstanding'),
    /** Passive ejection: `failures` in a row take a target out for baseMs, doubling up to maxMs. */
    eject: z
      .object({ failures: positiveInt.default(3), baseMs: positiveInt.default(10_000), maxMs: positiveInt.default(300_000) })
      .strict()
      .prefault({}),
    /** Optional active check: a GET of `path` on each target every intervalMs; not 2xx within timeoutMs takes it out. */
    healthCheck: z
      .object({
        path: z.string().startsWith('/', 'must start with /'),
        intervalMs: positiveInt.default(5000),
        timeoutMs: positiveInt.default(1000),
      })
      .strict()
      .optional(),
    /** Further attempts on another target, within the SPEC 19 rules (never a second charge). */
    retries: z.number().int().min(0).max(10).default(1),
    auth: upstreamAuthSchema.default('passthrough'),
    timeoutMs: positiveInt.default(120_000),
    /** After the response headers: no body byte for this long cuts the response (a stalled stream). */
    idleTimeoutMs: positiveInt.default(120_000),
    maxSockets: positiveInt.default(256),
    /** Adds x-tollgate-team, -project and -key-id to what is forwarded (client copies are removed either way). */
    identityHeaders: z.boolean().default(false),
  })
  .strict()
  .superRefine((upstream, ctx) => {
    if (upstream.url !== undefined && upstream.targets !== undefined) {
      ctx.addIssue({ code: 'custom', path: ['targets'], message: 'give either url or targets, not both' });
    } else if (upstream.url === undefined && upstream.targets === undefined) {
      ctx.addIssue({ code: 'custom', path: ['url'], message: 'must be an http:// or https:// URL (or give targets)' });
    }
  });
export type UpstreamConfig = z.infer<typeof upstreamSchema>;

/**
 * A scope's model patterns (SPEC 21): names, `*` wildcards, `@group`s; absent or null: the scope
 * has no list of its own (`models.default` applies). Entries and groups are checked in models/.
 */
export const modelPatterns = z.array(z.string());
const ownModelList = modelPatterns.nullish();

/** `models:` (SPEC 21): named groups of patterns, the default list, how long the host's model list is cached. */
const modelsSchema = z
  .object({
    groups: z.record(z.string().regex(/^[A-Za-z0-9_.-]+$/, 'a group name is letters, digits, _ . -'), modelPatterns).nullish().transform((v) => v ?? {}),
    default: modelPatterns.default(['*']),
    listCacheMs: positiveInt.default(10_000),
    ...modelRoutingShape,
  })
  .strict()
  .prefault({});
export type ModelsConfig = z.infer<typeof modelsSchema>;

/** Projects of a key's team it may use (`*`: any); the admin API takes the same list. */
export const keyProjects = z.array(z.union([z.literal('*'), namePart])).min(1, 'must name at least one project (or "*")');

const staticKeySchema = z
  .object({
    id: z.string().min(1),
    sha256: sha256Hex,
    team: namePart,
    projects: keyProjects.default(['*']),
    /** Absent: `default` when the key may use it, else its first project (SPEC 6.2). */
    defaultProject: namePart.optional(),
    limits: limitSetSchema.default({}),
    models: ownModelList,
  })
  .strict()
  .transform((key, ctx) => {
    const defaultProject = defaultProjectOf(key.projects, key.defaultProject);
    if (defaultProject !== undefined) return { ...key, defaultProject };
    const remedy = `name one of them, or leave it out to use ${defaultProjectOf(key.projects)}`;
    ctx.addIssue({ code: 'custom', path: ['defaultProject'], message: defaultProjectRefusal(key.projects, key.defaultProject!, remedy) });
    return z.NEVER;
  });
export type StaticKeyConfig = z.infer<typeof staticKeySchema>;

const jwtSchema = z
  .object({
    jwksUrl: z.url().optional(),
    secret: z.string().min(1).optional(),
    publicKey: z.string().min(1).optional(),
    issuer: z.string().optional(),
    audience: z.union([z.string(), z.array(z.string())]).optional(),
    algorithms: z.array(z.string()).min(1).optional(),
    claims: z
      .object({
        team: z.string().default('team'),
        projects: z.string().default('projects'),
        subject: z.string().default('sub'),
        /** A claim holding the token's model patterns (SPEC 21); absent from a token: `auth.jwt.models`. */
        models: z.string().optional(),
      })
      .strict()
      .default({ team: 'team', projects: 'projects', subject: 'sub' }),
    /** The model patterns of a token without the claim; absent: `models.default`. */
    models: ownModelList,
    /** Preferred for a token without the header when the token may use it; else the key rule (see auth/jwt.ts). */
    defaultProject: namePart.optional(),
    limits: limitSetSchema.default({}),
    /** A token without `exp` never expires: refused unless the operator opts out. */
    requireExpiry: z.boolean().default(true),
    jwksCacheMaxAgeMs: positiveInt.default(600_000),
    jwksTimeoutMs: positiveInt.default(5_000),
  })
  .strict()
  .superRefine((jwt, ctx) => {
    const sources = [jwt.jwksUrl, jwt.secret, jwt.publicKey].filter((v) => v !== undefined).length;
    if (sources !== 1) {
      ctx.addIssue({ code: 'custom', message: 'set exactly one of jwksUrl, secret or publicKey' });
    }
  });
export type JwtConfig = z.infer<typeof jwtSchema>;

/** What an admin key may do (SPEC 16): `admin` everything, `viewer` reads, `team-admin` its own team's keys and data. */
export const ADMIN_ROLES = ['admin', 'viewer', 'team-admin'] as const;
export const adminRoleSchema = z.enum(ADMIN_ROLES, { error: 'must be admin, viewer or team-admin' });

/**
 * What is wrong with an admin key's role and team together, or undefined (SPEC 16): a team-admin
 * names its team, the other roles none. One rule for config keys, admin API bodies and a change
 * as it leaves a stored key.
 */
export function adminKeyTeamProblem(role: (typeof ADMIN_ROLES)[number], team: string | null | undefined): string | undefined {
  const named = team !== undefined && team !== null;
  if (role === 'team-admin' && !named) return 'a team-admin key names its team';
  if (role !== 'team-admin' && named) return 'only a team-admin key names a team';
  return undefined;
}

const adminKeySchema = z
  .object({ id: z.string().min(1), sha256: sha256Hex, role: adminRoleSchema.default('admin'), team: namePart.optional() })
  .strict()
  .superRefine((key, ctx) => {
    const problem = adminKeyTeamProblem(key.role, key.team);
    if (problem !== undefined) ctx.addIssue({ code: 'custom', path: ['team'], message: problem });
  });
export type AdminKeyConfig = z.infer<typeof adminKeySchema>;

/** A read-only team of the config file (SPEC 16): its limits hold over all of its traffic. */
const teamSchema = z
  .object({
    id: namePart,
    description: z.string().max(1000).nullish().transform((v) => v ?? null),
    limits: limitSetSchema.default({}),
    disabled: z.boolean().default(false),
    models: ownModelList,
  })
  .strict();
export type TeamConfig = z.infer<typeof teamSchema>;

/**
 * `teams:` is the list of SPEC 16, or `{ require, records }` where `require: true` refuses a
 * key (admin API) naming a team that has no record.
 */
const teamsSchema = z
  .union([z.array(teamSchema), z.object({ require: z.boolean().default(false), records: z.array(teamSchema).nullish().transform((v) => v ?? []) }).strict()])
  .nullish()
  .transform((v) => (Array.isArray(v) ? { require: false, records: v } : (v ?? { require: false, records: [] })));

const FAILURE_LIMIT_DEFAULTS = { perMinute: 30, blockSeconds: 60 };
/**
 * SPEC 15: past `perMinute` 401s from one client address, that address is refused (429) for
 * `blockSeconds`. `false` or null turns it off (e.g. behind a proxy that hides client addresses).
 */
const failureLimitSchema = z
  .union([
    z.object({ perMinute: positiveInt.default(FAILURE_LIMIT_DEFAULTS.perMinute), blockSeconds: positiveInt.default(FAILURE_LIMIT_DEFAULTS.blockSeconds) }).strict(),
    z.literal(false),
    z.null(),
  ])
  .default(FAILURE_LIMIT_DEFAULTS)
  .transform((limit) => (limit === false ? null : limit));
export type FailureLimitConfig = z.infer<typeof failureLimitSchema>;

export const configSchema = z
  .object({
    server: z
      .object({
        host: z.string().default('0.0.0.0'),
        port: z.number().int().min(0).max(65535).default(8080),
        bodyLimit: byteSize.default(10 * 1024 ** 2),
        streamBodyLimit: byteSize.default(200 * 1024 ** 2),
        shutdownGraceMs: nonNegativeInt.default(30_000),
        trustProxy: z.boolean().default(false),
        /** A connection must send its request headers within this (also a connection that sends nothing). */
        headersTimeoutMs: positiveInt.default(30_000),
        /** Whole-request receive limit (Node's requestTimeout); 0: none — long uploads are watched by bodyIdleTimeoutMs. */
        requestTimeoutMs: nonNegativeInt.default(0),
        /** A request body that sends no byte for this long is answered 408 and its connection closed. */
        bodyIdleTimeoutMs: positiveInt.default(30_000),
        /** Idle keep-alive connections close after this; longer than common load balancers' 60 s idle timeout. */
        keepAliveTimeoutMs: positiveInt.default(65_000),
        /**
         * Open client connections at most; at it, the connection waiting longest is closed for a new one.
         * null: derived from the open-file limit, leaving room for upstream sockets and stores (connections/capacity.ts).
         */
        maxConnections: positiveInt.nullish().transform((v) => v ?? null),
        /** From 80% of maxConnections, connections that have not completed a request within this are closed. */
        pressureHeadersTimeoutMs: positiveInt.default(2000),
        /** All request headers together (Node's default is 16 KB, too small for large JWTs; Envoy allows 60 KB). */
        maxHeaderBytes: byteSize.default(60 * 1024),
        /** Chat bodies buffered at once across all requests; past it new chat requests get 503 overloaded. */
        maxBufferedBytes: byteSize.default(256 * 1024 ** 2),
        /** Processes serving the port (node:cluster); `auto`: one per core. Restart-only. */
        workers: z.union([positiveInt, z.literal('auto')]).default(1),
      })
      .strict()
      .superRefine((server, ctx) => {
        if (server.requestTimeoutMs > 0 && server.requestTimeoutMs < server.headersTimeoutMs) {
          ctx.addIssue({ code: 'custom', path: ['requestTimeoutMs'], message: 'must be 0 (off) or at least headersTimeoutMs' });
        }
      })
      .prefault({}),
    upstreams: upstreamsSchema(upstreamSchema),
    auth: z
      .object({
        keys: z.array(staticKeySchema).nullish().transform((v) => v ?? []),
        jwt: jwtSchema.nullish().transform((v) => v ?? undefined),
        admin: z
          .object({ keys: z.array(adminKeySchema).nullish().transform((v) => v ?? []) })
          .strict()
          .prefault({}),
        failureLimit: failureLimitSchema,
      })
      .strict()
      .prefault({}),
    metering: z
      .object({
        projectHeader: z.string().regex(/^[A-Za-z0-9-]+-Project$/i, 'must look like <compat>-Project').default('OpenAI-Project'),
        forceStreamUsage: z.boolean().default(true),
        prices: pricesSchema,
        ledger: z
          .object({
            /** false: no usage rows are written (budgets and limits still hold; /admin/usage reads the rows already written). */
            enabled: z.boolean().default(true),
            retentionDays: positiveInt.default(400),
            /** Rows an instance keeps while the database is away; past it the oldest are dropped (each logged and counted). */
            maxBufferedRows: positiveInt.default(100_000),
          })
          .strict()
          .prefault({}),
      })
      .strict()
      .prefault({}),
    teams: teamsSchema,
    console: consoleSchema,
    models: modelsSchema,
    /** SPEC 24; only the thresholds here — the outbox adds webhooks and export. */
    rateLimits: z
      .object({
        onStoreError: z.enum(['open', 'closed']).default('open'),
        defaultCompletionTokens: nonNegativeInt.default(1024),
        /** How long an in-flight slot outlives an instance that died holding it (Redis store). */
        concurrencyLeaseMs: z.number().int().min(1000).default(30_000),
        projects: z
          .record(z.string().regex(projectLimitEntry, 'must be "<team>/<project>" or "<team>/*"'), limitSetSchema)
          .nullish()
          .transform((v) => v ?? {}),
      })
      .strict()
      .prefault({}),
    redis: z
      .object({
        url: z
          .string()
          .regex(/^(rediss?:\/\/.+)?$/, 'must be empty (in-memory store) or a redis:// or rediss:// URL')
          .nullish()
          .transform((v) => v ?? ''),
        cluster: z
          .array(z.string().regex(/^(rediss?:\/\/([^@\s]*@)?)?[^\s/:@]+:\d+$/, 'must be a node address: redis://[user:pass@]host:port or host:port'))
          .nullish()
          // One form for every consumer: bare host:port nodes become redis:// URLs.
          .transform((v) => v?.map((node) => (node.includes('://') ? node : `redis://${node}`)) ?? undefined),
        keyPrefix: z.string().default('tollgate:'),
        commandTimeoutMs: positiveInt.default(100),
      })
      .strict()
      .prefault({}),
    ownership: z
      .object({
        /** auto: on when upstreams.service.auth is { bearer } (every team shares one upstream account). */
        mode: z.enum(['auto', 'on', 'off']).default('auto'),
        /** team: any key of the owning team may use a resource; project: only the owning team/project. */
        scope: z.enum(['team', 'project']).default('team'),
        /** A resource the gateway never saw created: deny (404) or allow. */
        unknown: z.enum(['deny', 'allow']).default('deny'),
      })
      .strict()
      .prefault({}),
    /** Routes added to the built-in table (SPEC 20; config/routes.ts). */
    routes: routesSchema,
    database: z
      .object({
        /** postgres://… (shared by every instance); empty: the embedded SQLite file at `path` (one instance). */
        url: z
          .string()
          .regex(/^(postgres(ql)?:\/\/.+)?$/, 'must be empty (embedded SQLite file) or a postgres:// URL')
          .nullish()
          .transform((v) => v ?? ''),
        path: z.string().min(1).default('data/tollgate.db'),
        /** Bound on any one database call (admin API, key loads, ledger writes). */
        timeoutMs: positiveInt.default(2000),
        /** The longest a request ever waits on the database (an ownership lookup that misses the cache). */
        requestTimeoutMs: positiveInt.default(100),
        /** Full reload of keys and ownership: the fallback should a change notification be missed. */
        refreshIntervalMs: positiveInt.default(10_000),
      })
      .strict()
      .prefault({}),
    metrics: z
      .object({
        path: z.string().startsWith('/').default('/metrics'),
        port: z.number().int().min(0).max(65535).nullish().transform((v) => v ?? null),
        bearerToken: z.string().min(1).nullish().transform((v) => v ?? null),
        maxTeamProjects: positiveInt.default(500),
      })
      .strict()
      .prefault({}),
    logging: z
      .object({ level: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info') })
      .strict()
      .prefault({}),
    tracing: tracingSchema,
    notifications: notificationsSchema,
  })
  .strict()
  .superRefine((config, ctx) => {
    for (const issue of upstreamRefusals(config)) ctx.addIssue({ code: 'custom', ...issue });
    const seen = new Set<string>();
    config.auth.keys.forEach((key, i) => {
      if (seen.has(key.id)) ctx.addIssue({ code: 'custom', path: ['auth', 'keys', i, 'id'], message: `duplicate key id "${key.id}"` });
      seen.add(key.id);
    });
    const teams = new Set<string>();
    config.teams.records.forEach((team, i) => {
      if (teams.has(team.id)) ctx.addIssue({ code: 'custom', path: ['teams', i, 'id'], message: `duplicate team id "${team.id}"` });
      teams.add(team.id);
    });
  });

export type Config = z.infer<typeof configSchema>;
export type ConfigInput = z.input<typeof configSchema>;
