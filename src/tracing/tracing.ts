import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapGetter, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { UpstreamName } from '../config/index.js';
import type { ChatSampling } from '../validation/index.js';
import { asGatewayError, type GatewayError } from '../errors.js';
import type { ResponseTap } from '../metering/index.js';
import type { GenAiMetrics } from './genai-metrics.js';
import { ReplyWatch, requestAttributes } from './genai.js';

/** What a request span reads from the request: its headers (one value each, as the propagator wants). */
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

const headerSetter = { set: (carrier: OutgoingHttpHeaders, key: string, value: string) => void (carrier[key] = value) };

/**
 * The HTTP conventions' known methods: any other is `_OTHER` (its name in
 * `http.request.method_original`), so a client cannot coin span names. Every method a route may
 * accept (config routes: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS) is among them.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY']);

export interface TracingSettings {
  /** Prompt and completion text on the client span (`gen_ai.input.messages`, `gen_ai.output.messages`). */
  readonly captureContent: boolean;
  readonly providerNames: Readonly<Record<UpstreamName, string>>;
  readonly metrics: GenAiMetrics | undefined;
}

/** The gateway's steps that get a span of their own (SPEC 18). */
export type StepName = 'auth' | 'validate' | 'ownership' | 'limits';

/** The upstream hop: which upstream, and, on a chat route, the model and the body the gateway holds. */
export interface UpstreamCall {
  readonly upstream: UpstreamName;
  readonly method: string;
  readonly chat?: { readonly model: string; readonly sampling: ChatSampling; readonly raw: Buffer | undefined };
}

/** How a request ended, as completion works it out (settle, meter, log). */
export interface RequestOutcome {
  readonly status: number;
  readonly team?: string;
  readonly project?: string;
  readonly keyId?: string;
  readonly costNanos?: number;
  readonly inputTokens?: number;
  readonly outputTokens?: number;
  readonly responseModel?: string;
  readonly aborted: boolean;
}

/** The tracer provider, the W3C propagator and what spans are made with; `undefined` in its place means tracing is off. */
export class Tracing {
  private readonly tracer: Tracer;

  constructor(
    private readonly provider: BasicTracerProvider,
    private readonly propagator: TextMapPropagator,
    readonly settings: TracingSettings,
  ) {
    this.tracer = provider.getTracer('tollgate');
  }

  /**
   * The SERVER span of a /v1 request, continuing the client's `traceparent` (a malformed one is
   * ignored by the propagator: the request starts a trace of its own). `route` is the template
   * its path matched; without one (a path no route knows) the span is named by the method alone,
   * as the HTTP conventions say.
   */
  startRequest(req: IncomingMessage, route: string | undefined, method: string): RequestTrace {
    const parent = this.propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const path = req.url ?? '/';
    const query = path.indexOf('?');
    const known = KNOWN_METHODS.has(method);
    const attributes: Attributes = {
      'http.request.method': known ? method : '_OTHER',
      'url.path': query < 0 ? path : path.slice(0, query),
      'url.scheme': 'http',
    };
    if (!known) attributes['http.request.method_original'] = method;
    if (route !== undefined) attributes['http.route'] = route;
    const agent = req.headers['user-agent'];
    if (agent !== undefined) attributes['user_agent.original'] = agent;
    const name = `${known ? method : 'HTTP'}${route === undefined ? '' : ` ${route}`}`;
    const span = this.tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
    return new RequestTrace(this, span, trace.setSpan(parent, span));
  }

  /**
   * A /v1 request refused before the pipeline (400 unsafe path, 404 no route, 405 with the
   * template its path matched): a SERVER span like any other, with the refusal's reason.
   */
  refusedBeforeRoute(req: IncomingMessage, method: string, refusal: GatewayError, route: string | undefined): void {
    const request = this.startRequest(req, route, method);
    request.refused(refusal);
    request.finish({ status: refusal.status, aborted: false });
  }

  /** Internal: a span of the request's, under `parent`. */
  span(name: string, kind: SpanKind, parent: Context, attributes?: Attributes): Span {
    return this.tracer.startSpan(name, { kind, attributes }, parent);
  }

  /** Writes `traceparent`/`tracestate` for the span of `context` into outgoing headers. */
  inject(context: Context, headers: OutgoingHttpHeaders): void {
    this.propagator.inject(context, headers, headerSetter);
  }

  /** Sends what is batched, until `deadline`, then stops (spans still queued then are dropped). */
  async close(deadline: number): Promise<void> {
    const timeoutMillis = Math.max(0, deadline - Date.now());
    await Promise.race([this.provider.shutdown(), new Promise((resolve) => setTimeout(resolve, timeoutMillis).unref())]).catch(() => undefined);
    await this.settings.metrics?.close(deadline);
  }
}

/** A refusal or failure on a span: the catalogue code as `error.type`, the message as the reason. */
function markRefusal(span: Span, err: unknown): void {
  const error = asGatewayError(err);
  span.setAttribute('error.type', error.code);
  span.setAttribute('tollgate.refusal.reason', error.message);
  if (error.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/** One request's spans: the SERVER span, its steps and the upstream CLIENT span. */
export class RequestTrace {
  readonly traceId: string;
  private client: Span | undefined;
  private clientContext: Context | undefined;
  private clientStartedAt = 0;
  private watch: ReplyWatch | undefined;
  private call: UpstreamCall | undefined;
  private refusal: unknown;
  /**
   * Whether the request was sampled. Every sampler decides a trace as one (by its parent, or by
   * its trace id), so an unsampled request's steps would be unsampled too: they get no span.
   */
  private readonly recording: boolean;

  constructor(
    private readonly tracing: Tracing,
    private readonly server: Span,
    private readonly context: Context,
  ) {
    this.traceId = server.spanContext().traceId;
    this.recording = server.isRecording();
  }

  /** Runs one step under a span of its name; a step that refuses the request leaves its reason on the span. */
  async step<T>(name: StepName, work: () => Promise<T>, describe?: (result: T) => Attributes): Promise<T> {
    if (!this.recording) return work();
    const span = this.tracing.span(name, SpanKind.INTERNAL, this.context);
    try {
      const result = await work();
      if (describe && span.isRecording()) span.setAttributes(describe(result));
      return result;
    } catch (err) {
      markRefusal(span, err);
      if (name === 'limits') span.setAttribute('tollgate.limits.decision', 'refused');
      throw err;
    } finally {
      span.end();
    }
  }

  /** Starts the CLIENT span of the upstream hop (`chat <model>` with the GenAI conventions on chat routes). */
  startUpstream(call: UpstreamCall): void {
    this.call = call;
    // Unsampled: the upstream is sent the SERVER span's context (its trace id, not sampled), and
    // only the GenAI metrics, if on, need the hop's timing.
    if (!this.recording && !this.tracing.settings.metrics) return;
    const { chat } = call;
    const attributes: Attributes = { 'http.request.method': call.method, 'tollgate.upstream': call.upstream };
    if (chat) {
      attributes['gen_ai.operation.name'] = 'chat';
      attributes['gen_ai.provider.name'] = this.tracing.settings.providerNames[call.upstream];
      attributes['gen_ai.request.model'] = chat.model;
      // The span records exactly when the request does (its parent's, or its trace id's, decision).
      if (this.recording) requestAttributes(chat.sampling, chat.raw, this.tracing.settings.captureContent, attributes);
    }
    const span = this.tracing.span(chat ? `chat ${chat.model}` : call.method, SpanKind.CLIENT, this.context, attributes);
    this.client = span;
    this.clientContext = trace.setSpan(this.context, span);
    this.clientStartedAt = performance.now();
  }

  /** `traceparent`/`tracestate` for the upstream: the CLIENT span's (the SERVER span's before it starts). */
  injectInto(headers: OutgoingHttpHeaders): void {
    this.tracing.inject(this.clientContext ?? this.context, headers);
  }

  /** The upstream's status on the CLIENT span. */
  upstreamAnswered(status: number): void {
    this.client?.setAttribute('http.response.status_code', status);
  }

  /**
   * Watches a chat reply on its way to the client (id, finish reasons, text, and on a stream its
   * first chunk) when its span records or the GenAI metrics are on.
   */
  watchReply(tap: ResponseTap, streamed: boolean): ResponseTap {
    if (!this.call?.chat || !(this.client?.isRecording() || this.tracing.settings.metrics)) return tap;
    return (this.watch = new ReplyWatch(tap, streamed));
  }

  /** The request was refused or failed (the error catalogue's code and message). */
  refused(err: unknown): void {
    this.refusal = err;
  }

  /** Ends the request's spans with what completion learned; records the GenAI metrics. */
  finish(outcome: RequestOutcome): void {
    const tollgate: Attributes = {};
    if (outcome.team !== undefined) tollgate['tollgate.team'] = outcome.team;
    if (outcome.project !== undefined) tollgate['tollgate.project'] = outcome.project;
    if (outcome.keyId !== undefined) tollgate['tollgate.key_id'] = outcome.keyId;
    if (outcome.costNanos !== undefined) tollgate['tollgate.cost'] = outcome.costNanos / 1e9;
    if (this.client) this.finishClient(outcome, tollgate);
    const { server } = this;
    server.setAttributes(tollgate);
    server.setAttribute('http.response.status_code', outcome.status);
    if (this.refusal !== undefined) markRefusal(server, this.refusal);
    else if (outcome.status >= 500) server.setStatus({ code: SpanStatusCode.ERROR });
    server.end();
  }

  private finishClient(outcome: RequestOutcome, tollgate: Attributes): void {
    const client = this.client!;
    const endedAt = performance.now();
    const attributes: Attributes = { ...tollgate };
    if (this.call?.chat) this.addReply(attributes, outcome);
    if (outcome.aborted) attributes['tollgate.aborted'] = true;
    client.setAttributes(attributes);
    if (outcome.status >= 500 && this.refusal !== undefined) markRefusal(client, this.refusal);
    client.end();
    if (this.call?.chat && this.tracing.settings.metrics) this.recordMetrics(outcome, endedAt);
  }

  private addReply(attributes: Attributes, outcome: RequestOutcome): void {
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (outcome.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = outcome.inputTokens;
    if (outcome.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = outcome.outputTokens;
    const watch = this.watch;
    if (!watch || !this.client!.isRecording()) return;
    if (watch.firstChunkAt !== undefined) attributes['gen_ai.response.time_to_first_chunk'] = (watch.firstChunkAt - this.clientStartedAt) / 1000;
    const facts = watch.facts(this.tracing.settings.captureContent);
    if (facts.id !== undefined) attributes['gen_ai.response.id'] = facts.id;
    if (facts.finishReasons.length > 0) attributes['gen_ai.response.finish_reasons'] = facts.finishReasons;
    if (this.tracing.settings.captureContent) {
      attributes['gen_ai.output.messages'] = JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: facts.text }], finish_reason: facts.finishReasons[0] ?? null },
      ]);
    }
  }

  private recordMetrics(outcome: RequestOutcome, endedAt: number): void {
    const call = this.call!;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.tracing.settings.providerNames[call.upstream],
      'gen_ai.request.model': call.chat!.model,
    };
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (this.refusal !== undefined) attributes['error.type'] = asGatewayError(this.refusal).code;
    const firstChunkAt = this.watch?.firstChunkAt;
    this.tracing.settings.metrics!.record({
      attributes,
      inputTokens: outcome.inputTokens,
      outputTokens: outcome.outputTokens,
      durationSeconds: (endedAt - this.clientStartedAt) / 1000,
      firstChunkSeconds: firstChunkAt === undefined ? undefined : (firstChunkAt - this.clientStartedAt) / 1000,
    });
  }
}
