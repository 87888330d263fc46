/** The OpenAI error body every gateway-made error (all but 422) is rendered as. */
export interface OpenAIErrorBody {
  error: { message: string; type: string; param: string | null; code: string };
}

const typeForStatus = (status: number): string => {
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
}
