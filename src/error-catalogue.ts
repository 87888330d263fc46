/*
 * Every error the gateway answers with, in one place (Fastify's errors.js): status, code,
 * message template, and the headers and `param` each always carries. Code raises them through
 * `errors.<name>(...)` (src/errors.ts), never with ad-hoc strings; docs/errors.md lists the codes.
 * A code may serve several entries (one per situation, each with its own words), but always with
 * one status and one type: a client that switches on the code is never surprised.
 */

type Headers = Readonly<Record<string, string>>;

/** One error: what it always is, and what its arguments fill in. */
export interface ErrorEntry<A extends unknown[] = never[]> {
  readonly status: number;
  /** The OpenAI `code`. */
  readonly code: string;
  /** The OpenAI `type`, only where it is not the one the status implies (errors.ts `typeForStatus`). */
  readonly type?: string;
  readonly message: (...args: A) => string;
  /** Headers it always carries. */
  readonly headers?: Headers;
  /** Headers its arguments decide (added after `headers`). */
  readonly headersFrom?: (...args: A) => Headers;
  /** The request field it names, when fixed. */
  readonly param?: string;
  /** The request field it names, when its arguments decide (null: none). */
  readonly paramFrom?: (...args: A) => string | null;
}

/** Ties the other functions' arguments to the message's. */
const entry = <A extends unknown[]>(e: ErrorEntry<A>): ErrorEntry<A> => e;

/** Said of a body whose rest is left unread: the connection cannot carry another request. */
const CLOSE: Headers = Object.freeze({ connection: 'close' });
const RETRY_SOON: Headers = Object.freeze({ 'retry-after': '1' });

export const ERROR_CATALOGUE = {
  // --- the path and the method (before auth) ---
  routeNotFound: entry({ status: 404, code: 'not_found', message: (method: string, path: string) => `No route for ${method} ${path}.` }),
  resourceKindNotFound: entry({ status: 404, code: 'not_found', param: 'kind', message: (kind: string) => `No resource kind "${kind}": kinds are lowercase names of a-z, 0-9 and _ (model, training_job, or a kind a config route names).` }),
  methodNotAllowed: entry({
    status: 405,
    code: 'method_not_allowed',
    message: (method: string, path: string, allow: string) => `${method} is not allowed on ${path}; use ${allow}.`,
    headersFrom: (_method, _path, allow) => ({ allow }),
  }),
  pathEncodingInvalid: entry({
    status: 400,
    code: 'invalid_path',
    message: () => 'The request path is not valid percent-encoding: each % must start a %XX escape of UTF-8 bytes.',
  }),
  pathUnsafe: entry({ status: 400, code: 'invalid_path', message: (what: string) => `The request path contains ${what}, which is not allowed.` }),
  pathParamEncodingInvalid: entry({
    status: 400,
    code: 'invalid_path',
    message: (param: string) => `The ${param} in the path is not valid percent-encoding.`,
    paramFrom: (param) => param,
  }),

  // --- auth: AuthFailure (src/auth/failure.ts) picks one by reason; its sites word the message ---
  invalidApiKey: entry({ status: 401, code: 'invalid_api_key', headers: { 'www-authenticate': 'Bearer' }, message: (message: string) => message }),
  adminRequired: entry({ status: 403, code: 'admin_required', message: (message: string) => message }),
  // --- console sessions (SPEC 17) ---
  csrfTokenInvalid: entry({
    status: 403,
    code: 'csrf_token_invalid',
    message: () => 'A write signed in through a console session must send the session\'s csrfToken as the x-csrf-token header.',
  }),
  keySignInDisabled: entry({
    status: 403,
    code: 'key_sign_in_disabled',
    message: () => 'Console sign-in with an admin key is turned off (console.keySignIn: false): sign in through the identity provider.',
  }),
  sessionKeyMissing: entry({ status: 400, code: 'invalid_request', param: 'key', message: () => 'The body must be a JSON object whose "key" is the admin key to sign in with.' }),
  tooManyAuthFailures: entry({ status: 429, code: 'too_many_auth_failures', message: (message: string) => message }),
  authUnavailable: entry({
    status: 503,
    code: 'auth_unavailable',
    message: () => 'The identity provider (JWKS) could not be reached to verify the token; retry shortly.',
  }),

  // --- the project header ---
  invalidProject: entry({
    status: 400,
    code: 'invalid_project',
    message: (headerName: string) => `Invalid ${headerName} header: expected "<team>/<project>", each 1-128 characters of A-Z a-z 0-9 . _ -.`,
    paramFrom: (headerName) => headerName,
  }),
  projectOfOtherTeam: entry({
    status: 403,
    code: 'project_forbidden',
    message: (headerName: string, keyTeam: string, team: string) => `This key belongs to team "${keyTeam}" and cannot act for team "${team}".`,
    paramFrom: (headerName) => headerName,
  }),
  projectForbidden: entry({
    status: 403,
    code: 'project_forbidden',
    message: (headerName: string, team: string, project: string) => `This key may not use project "${team}/${project}".`,
    paramFrom: (headerName) => headerName,
  }),

  // --- the body ---
  bodyTooLarge: entry({ status: 413, code: 'request_too_large', headers: CLOSE, message: (limit: number) => `The request body exceeds the limit of ${limit} bytes.` }),
  bodyStalled: entry({ status: 408, code: 'request_timeout', headers: CLOSE, message: (idleMs: number) => `The request body stopped arriving: no byte for ${idleMs} ms.` }),
  clientClosed: entry({ status: 499, code: 'client_closed', message: () => 'The client went away during its upload.' }),
  overloaded: entry({
    status: 503,
    code: 'overloaded',
    headers: { ...RETRY_SOON, ...CLOSE },
    message: () => 'The gateway is holding as many request bodies as it may (server.maxBufferedBytes); retry shortly.',
  }),
  /** A chat body that failed validation; rendered FastAPI-shaped by ValidationError, this message is never sent. */
  validationFailed: entry({ status: 422, code: 'validation_failed', message: () => 'The request body failed validation (FastAPI-shaped 422).' }),

  // --- ownership (SPEC 13): guarded bodies and resources ---
  guardedBodyEncoded: entry({
    status: 400,
    code: 'invalid_request',
    headers: CLOSE,
    message: (encoding: string) => `A guarded body must be sent uncompressed (Content-Encoding: ${encoding}).`,
  }),
  guardedBodyNotUtf8: entry({ status: 400, code: 'invalid_request', message: (param: string | null) => 'The body must be UTF-8 JSON without a byte order mark.', paramFrom: (param) => param }),
  /** The body is not one JSON object (its words depend on the kind of body: `notAnObject`). */
  guardedBodyNotObject: entry({ status: 400, code: 'invalid_request', message: (message: string, _param: string | null) => message, paramFrom: (_message, param) => param }),
  fieldRepeated: entry({ status: 400, code: 'invalid_request', message: (key: string) => `The body has more than one top-level "${key}".`, paramFrom: (key) => key }),
  fieldNotUnicode: entry({ status: 400, code: 'invalid_request', message: (key: string) => `The body's top-level "${key}" is not well-formed Unicode.`, paramFrom: (key) => key }),
  fieldNotString: entry({ status: 400, code: 'invalid_request', message: (key: string) => `The body's top-level "${key}" must be a string.`, paramFrom: (key) => key }),
  // The top-level field a guarded upload is held for (`model_id` of a job creation, a config route's `checks-body` field).
  jobBodyNotObject: entry({ status: 400, code: 'invalid_request', message: (field: string) => `The body must be a JSON object with a top-level "${field}".`, paramFrom: (field) => field }),
  modelIdMissing: entry({ status: 400, code: 'invalid_request', message: (field: string) => `The body has no top-level "${field}".`, paramFrom: (field) => field }),
  modelIdNotString: entry({ status: 400, code: 'invalid_request', message: (field: string) => `The body's top-level "${field}" must be a non-empty string.`, paramFrom: (field) => field }),
  modelIdBodyEnded: entry({ status: 400, code: 'invalid_request', message: (_field: string) => 'The body ended before it could be read.', paramFrom: (field) => field }),
  /** The rest of the upload is not read: the connection cannot carry another request. */
  modelIdNotWithinHoldLimit: entry({
    status: 400,
    code: 'invalid_request',
    headers: CLOSE,
    message: (holdLimit: number, field: string) => `The body has no top-level "${field}" within its first ${holdLimit} bytes (server.bodyLimit).`,
    paramFrom: (_holdLimit, field) => field,
  }),
  /** Another team's resource and none at all answer alike: nothing tells them apart. */
  resourceNotFound: entry({
    status: 404,
    code: 'resource_not_found',
    message: (noun: string, id: string, _param: string) => `No ${noun} "${id}" was found for this team.`,
    paramFrom: (_noun, _id, param) => param,
  }),
  modelNotFound: entry({ status: 404, code: 'model_not_found', param: 'model', message: (model: string) => `The model "${model}" does not exist or you do not have access to it.` }),
  /** A model a body field names (`base_model`, a `checks-model` field) that the caller may not use: the unknown-model answer, naming the field (SPEC 21). */
  modelNotFoundIn: entry({
    status: 404,
    code: 'model_not_found',
    message: (model: string, _param: string) => `The model "${model}" does not exist or you do not have access to it.`,
    paramFrom: (_model, param) => param,
  }),
  nameInUse: entry({ status: 409, code: 'name_in_use', param: 'name', message: (artifact: string) => `The model name "${artifact}" belongs to another team; choose another name.` }),

  // --- limits ---
  /** A limit refused the request: the limit-kinds table (src/limits/kinds.ts) words the 429 and picks its code. */
  rateLimitExceeded: entry({ status: 429, code: 'rate_limit_exceeded', message: (message: string, _headers: Headers) => message, headersFrom: (_message, headers) => headers }),
  insufficientQuota: entry({ status: 429, code: 'insufficient_quota', message: (message: string, _headers: Headers) => message, headersFrom: (_message, headers) => headers }),
  storeUnavailable: entry({
    status: 503,
    code: 'store_unavailable',
    headers: RETRY_SOON,
    message: () => 'The rate-limit store (Redis) is unavailable, so the request cannot be admitted; retry shortly.',
  }),

  // --- the upstream ---
  upstreamRefused: entry({ status: 502, code: 'upstream_unavailable', message: (name: string) => `The ${name} upstream refused the connection or could not be reached.` }),
  upstreamClosed: entry({ status: 502, code: 'upstream_unavailable', message: (name: string) => `The ${name} upstream closed the connection before answering.` }),
  upstreamBrokeOff: entry({ status: 502, code: 'upstream_unavailable', message: () => 'The upstream broke off its answer.' }),
  upstreamTimeout: entry({ status: 504, code: 'upstream_timeout', message: (name: string, timeoutMs: number) => `The ${name} upstream did not answer within ${timeoutMs} ms.` }),
  upstreamCreationTooLarge: entry({ status: 502, code: 'upstream_invalid', message: () => 'The upstream answered a creation with more than 1 MB; nothing was recorded.' }),

  // --- the admin API ---
  /** A body field that is not valid; the message names the field and says what it must be. */
  invalidRequest: entry({ status: 400, code: 'invalid_request', message: (param: string, message: string) => message, paramFrom: (param) => param }),
  /** A query parameter that is not valid; the message names it and says what it must be. */
  invalidQuery: entry({ status: 400, code: 'invalid_query', message: (param: string, message: string) => message, paramFrom: (param) => param }),
  adminBodyNotJson: entry({ status: 400, code: 'invalid_request', param: 'body', message: () => 'The body is not valid JSON.' }),
  adminBodyNotUtf8: entry({ status: 400, code: 'invalid_request', param: 'body', message: () => 'The body must be UTF-8 JSON.' }),
  adminBodyUndecodable: entry({ status: 400, code: 'invalid_request', param: 'body', message: () => 'The body could not be decoded (content-encoding).' }),
  adminBodyUnreadable: entry({ status: 400, code: 'invalid_request', param: 'body', message: () => 'The body could not be read as sent (length or encoding).' }),
  adminBodyTooLarge: entry({ status: 413, code: 'request_too_large', message: () => 'The body exceeds the limit of 64 KB for admin requests.' }),
  defaultProjectRefused: entry({ status: 400, code: 'invalid_request', param: 'defaultProject', message: (refusal: string) => `defaultProject: ${refusal}` }),
  keyNotFound: entry({ status: 404, code: 'key_not_found', param: 'id', message: (id: string) => `No key with id "${id}".` }),
  readOnlyKey: entry({
    status: 409,
    code: 'read_only_key',
    param: 'id',
    message: (id: string) => `Key "${id}" comes from the configuration file (auth.keys); change it there and reload.`,
  }),
  artifactOnlyForModel: entry({ status: 400, code: 'invalid_request', param: 'artifact', message: () => 'Only a model has an artifact name.' }),
  resourceNotRecorded: entry({ status: 404, code: 'resource_not_found', param: 'id', message: (noun: string, id: string) => `No ${noun} "${id}" is recorded.` }),
  databaseUnavailable: entry({ status: 503, code: 'database_unavailable', headers: RETRY_SOON, message: () => 'The database cannot be reached right now; retry shortly.' }),
  databaseUnavailableForChange: entry({
    status: 503,
    code: 'database_unavailable',
    headers: RETRY_SOON,
    message: () => 'The database cannot be reached, so the change was not made; retry shortly.',
  }),
  invalidConfig: entry({ status: 400, code: 'invalid_config', message: (message: string) => message }),

  // --- teams and roles (SPEC 16) ---
  /** A team-admin giving a key a model pattern outside its team's list (SPEC 21). */
  modelsOutsideTeam: entry({
    status: 403,
    code: 'insufficient_role',
    param: 'models',
    message: (role: string, pattern: string) => `The admin role "${role}" may not give a key the model pattern "${pattern}": it is not within its team's models.`,
  }),
  insufficientRole: entry({ status: 403, code: 'insufficient_role', message: (role: string, what: string) => `The admin role "${role}" may not ${what}.` }),
  teamNotFound: entry({ status: 404, code: 'team_not_found', param: 'id', message: (id: string) => `No team with id "${id}".` }),
  teamExists: entry({ status: 409, code: 'team_exists', param: 'id', message: (id: string) => `A team with id "${id}" exists already.` }),
  teamInUse: entry({ status: 409, code: 'team_in_use', param: 'id', message: (id: string) => `Team "${id}" still has keys; revoke them (or move them) first.` }),
  readOnlyTeam: entry({
    status: 409,
    code: 'read_only_team',
    param: 'id',
    message: (id: string) => `Team "${id}" comes from the configuration file (teams); change it there and reload.`,
  }),
  teamDisabled: entry({ status: 403, code: 'team_disabled', message: (team: string) => `Team "${team}" is disabled; ask an administrator to enable it.` }),
  notificationNotFound: entry({ status: 404, code: 'notification_not_found', param: 'id', message: (id: string) => `No notification delivery with id "${id}".` }),
  exportBatchNotRetryable: entry({
    status: 409,
    code: 'export_batch_not_retryable',
    param: 'id',
    message: (id: string) => `"${id}" records a usage export batch that was sent; the export resends from its cursor by itself, so there is nothing to retry.`,
  }),
  adminKeyNotFound: entry({ status: 404, code: 'admin_key_not_found', param: 'id', message: (id: string) => `No admin key with id "${id}".` }),
  readOnlyAdminKey: entry({
    status: 409,
    code: 'read_only_key',
    param: 'id',
    message: (id: string) => `Admin key "${id}" comes from the configuration file (auth.admin.keys); change it there and reload.`,
  }),

  // --- ours ---
  internalError: entry({ status: 500, code: 'internal_error', message: () => 'The gateway failed to handle this request; it has been logged.' }),
};

export type ErrorName = keyof typeof ERROR_CATALOGUE;
