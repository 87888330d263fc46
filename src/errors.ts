import { ERROR_CATALOGUE, type ErrorEntry, type ErrorName } from './error-catalogue.js';

/** The OpenAI error body every gateway-made error (all but 422) is rendered as. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

export const typeForStatus = (status: number): string => {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  if (status >= 500) return 'server_error';
  return 'invalid_request_error';
};

/**
 * The one way to fail inside the gateway: carries the status, the OpenAI `code`, a message a
 * person can act on, and any headers the response needs (Allow, Retry-After, WWW-Authenticate).
 */
export class GatewayError extends Error {
  override name = 'GatewayError';
  readonly type: string;

  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
    readonly param: string | null = null,
    type?: string,
  ) {
    super(message);
    this.type = type ?? typeForStatus(status);
  }

  toBody(): OpenAIErrorBody {
    return { error: { message: this.message, type: this.type, param: this.param, code: this.code } };
  }

  /** The response body text. */
  renderBody(): string {
    return JSON.stringify(this.toBody());
  }
}

type ArgsOf<E> = E extends ErrorEntry<infer A> ? A : never;

/** One function per catalogue entry: `errors.keyNotFound(id)` is the GatewayError to throw. */
export type ErrorFactories = { readonly [N in ErrorName]: (...args: ArgsOf<(typeof ERROR_CATALOGUE)[N]>) => GatewayError };

function raise(entry: ErrorEntry<unknown[]>, args: unknown[]): GatewayError {
  const headers = entry.headersFrom === undefined ? (entry.headers ?? {}) : { ...entry.headers, ...entry.headersFrom(...args) };
  const param = entry.paramFrom === undefined ? (entry.param ?? null) : entry.paramFrom(...args);
  return new GatewayError(entry.status, entry.code, entry.message(...args), headers, param, entry.type);
}

/** The gateway's errors, by name (src/error-catalogue.ts): throw `errors.keyNotFound(id)`. */
export const errors = Object.fromEntries(
  Object.entries(ERROR_CATALOGUE).map(([name, entry]) => [name, (...args: unknown[]) => raise(entry as ErrorEntry<unknown[]>, args)]),
) as unknown as ErrorFactories;

const VALIDATION_FAILED = ERROR_CATALOGUE.validationFailed;

/**
 * A chat body that failed validation: 422 with the FastAPI/pydantic body the training service
 * itself would answer (`{"detail":[...]}`, rendered by the validator), not the OpenAI shape.
 * It fails through the same path as every other refusal, so it is logged and counted the same way.
 */
export class ValidationError extends GatewayError {
  override name = 'ValidationError';

  constructor(private readonly detailBody: string) {
    super(VALIDATION_FAILED.status, VALIDATION_FAILED.code, VALIDATION_FAILED.message());
  }

  override renderBody(): string {
    return this.detailBody;
  }
}

/** Converts anything thrown into the GatewayError to answer with (unknown errors become a 500). */
export function asGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  return errors.internalError();
}

interface WritableResponse {
  headersSent: boolean;
  setHeader(name: string, value: string): unknown;
  writeHead(status: number, headers: Record<string, string | number>): unknown;
  end(body: string): unknown;
  destroy(): unknown;
}

/**
 * Writes a gateway-made error (OpenAI shape) unless the response has started, in which case
 * the only honest signal left is to cut the connection.
 */
export function writeError(res: WritableResponse, error: GatewayError): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const body = error.renderBody();
  for (const name in error.headers) res.setHeader(name, error.headers[name]!);
  res.writeHead(error.status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}
