/**
 * Sends real HTTP requests to a gateway and keeps a ledger of what was sent, so a test can
 * compare the gateway's metrics with the traffic it actually produced.
 */

/** Token usage the upstream reports for one chat (steered with `x-fixture-usage`). */
export interface SentTokens {
  team: string;
  project: string;
  model: string;
  prompt: number;
  completion: number;
}

export interface TrafficRequest {
  /** A name for failure messages, e.g. "chat team-a json". */
  what: string;
  method: 'GET' | 'POST' | 'DELETE';
  path: string;
  /** The route template the gateway should label this request with. */
  route: string;
  /** The status this request is meant to get. */
  expect: number;
  /** Plain API key; none sends no Authorization header. */
  key?: string;
  headers?: Record<string, string>;
  body?: string;
  /** Usage metered for this request when it is answered as expected. */
  tokens?: SentTokens;
}

export interface SentRequest {
  readonly request: TrafficRequest;
  readonly status: number;
  readonly body: string;
}

const sumInto = (totals: Record<string, number>, key: string, value: number): void => {
  totals[key] = (totals[key] ?? 0) + value;
};

export class TrafficLedger {
  readonly sent: SentRequest[] = [];

  constructor(private readonly baseUrl: string) {}

  /** Sends one request and reads its whole body (a stream resolves once it has ended). */
  async send(request: TrafficRequest): Promise<SentRequest> {
    const headers: Record<string, string> = { ...request.headers };
    if (request.key !== undefined) headers.authorization = `Bearer ${request.key}`;
    if (request.body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(`${this.baseUrl}${request.path}`, { method: request.method, headers, body: request.body });
    const sent: SentRequest = { request, status: response.status, body: await response.text() };
    this.sent.push(sent);
    return sent;
  }

  /** Requests answered with another status than intended: the traffic is then not what the test assumes. */
  surprises(): Array<{ what: string; expected: number; status: number; body: string }> {
    return this.sent
      .filter((s) => s.status !== s.request.expect)
      .map((s) => ({ what: s.request.what, expected: s.request.expect, status: s.status, body: s.body.slice(0, 300) }));
  }

  /** `"<route> <method> <status>"` → requests sent. */
  requestsByRoute(): Record<string, number> {
    const totals: Record<string, number> = {};
    for (const { request } of this.sent) sumInto(totals, `${request.route} ${request.method} ${request.expect}`, 1);
    return totals;
  }

  /** `"<team> <project> <model> <type>"` → tokens the upstream reported for answered chats. */
  tokensByTeamProjectModelType(): Record<string, number> {
    const totals: Record<string, number> = {};
    for (const { request } of this.sent) {
      const tokens = request.tokens;
      if (!tokens) continue;
      const cell = `${tokens.team} ${tokens.project} ${tokens.model}`;
      sumInto(totals, `${cell} prompt`, tokens.prompt);
      sumInto(totals, `${cell} completion`, tokens.completion);
    }
    return totals;
  }

  /** How many requests were meant to get `status`. */
  count(status: number): number {
    return this.sent.filter((s) => s.request.expect === status).length;
  }
}

/** A chat body; `stream` with or without `stream_options.include_usage`. */
export function chatBody(model: string, stream: 'no' | 'with-usage' | 'without-usage' = 'no'): string {
  const body: Record<string, unknown> = { model, messages: [{ role: 'user', content: 'how is the loss?' }] };
  if (stream !== 'no') body.stream = true;
  if (stream === 'with-usage') body.stream_options = { include_usage: true };
  return JSON.stringify(body);
}

export interface ChatSpec {
  what: string;
  key?: string;
  team: string;
  project: string;
  model: string;
  /** What the fixture upstream reports (`x-fixture-usage`). */
  usage: [prompt: number, completion: number];
  expect?: number;
  stream?: 'no' | 'with-usage' | 'without-usage';
  headers?: Record<string, string>;
  /** The path sent, when not the route itself (e.g. with a trailing slash). */
  path?: string;
}

/** A chat request to `route` whose upstream reports `usage`; only an expected 200 meters tokens. */
export function chatRequest(route: string, spec: ChatSpec): TrafficRequest {
  const expect = spec.expect ?? 200;
  const [prompt, completion] = spec.usage;
  return {
    what: spec.what,
    method: 'POST',
    path: spec.path ?? route,
    route,
    expect,
    ...(spec.key === undefined ? {} : { key: spec.key }),
    headers: { 'x-fixture-usage': `${prompt},${completion}`, ...spec.headers },
    body: chatBody(spec.model, spec.stream),
    ...(expect === 200 ? { tokens: { team: spec.team, project: spec.project, model: spec.model, prompt, completion } } : {}),
  };
}
