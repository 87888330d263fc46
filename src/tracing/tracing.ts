import type { IncomingHttpHeaders, IncomingMessage, OutgoingHttpHeaders } from 'node:http';
import { ROOT_CONTEXT, SamplingDecision, SpanKind, TraceFlags, trace, type Attributes, type SpanContext, type TextMapGetter, type TextMapPropagator } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace-base';
import type { UpstreamName } from '../config/index.js';
import type { GatewayError } from '../errors.js';
import type { EndedTrace } from './export-messages.js';
import type { ExportThread } from './export-thread.js';
import type { GenAiMetrics } from './genai-metrics.js';
import { RequestTrace } from './request-trace.js';
import { PooledIdGenerator } from './span-ids.js';

/** What a request span reads from the request: its headers (one value each, as the propagator wants). */
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The W3C Trace Context headers: read from the client, written for the upstream (never passed on as they came). */
export const TRACE_CONTEXT_HEADERS: readonly string[] = ['traceparent', 'tracestate'];

/** The W3C Trace Context version the gateway writes (`traceparent: 00-<trace id>-<span id>-<flags>`). */
const W3C_VERSION = '00';

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

/**
 * Tracing's request-thread half: the W3C propagator, the SDK's sampler and id generator, and
 * the export thread that sends the spans; `undefined` in its place means tracing is off. Per
 * request, this thread notes ids, times and attributes (RequestTrace); when it ends it waits for
 * the next shipment, which builds its record and writes it as OTLP protobuf for the export
 * thread (export-thread.ts).
 */
export class Tracing {
  private readonly ids = new PooledIdGenerator();

  constructor(
    private readonly exportThread: ExportThread,
    private readonly propagator: TextMapPropagator,
    private readonly sampler: Sampler,
    readonly settings: TracingSettings,
  ) {}

  /**
   * The SERVER span of a /v1 request, continuing the client's `traceparent` (a malformed one is
   * ignored by the propagator: the request starts a trace of its own). `route` is the template
   * its path matched; without one (a path no route knows) the span is named by the method alone,
   * as the HTTP conventions say.
   */
  startRequest(req: IncomingMessage, route: string | undefined, method: string): RequestTrace {
    const parentContext = this.propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const found = trace.getSpanContext(parentContext);
    const parent = found && trace.isSpanContextValid(found) ? found : undefined;
    const traceId = parent ? parent.traceId : this.ids.generateTraceId();
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
    const decision = this.sampler.shouldSample(parentContext, traceId, name, SpanKind.SERVER, attributes, []).decision;
    const server: SpanContext = {
      traceId,
      spanId: this.ids.generateSpanId(),
      traceFlags: decision === SamplingDecision.RECORD_AND_SAMPLED ? TraceFlags.SAMPLED : TraceFlags.NONE,
      traceState: parent?.traceState,
    };
    return new RequestTrace(this, server, parent, name, attributes);
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

  /** Internal: a new span id of the request thread's choosing. */
  spanId(): string {
    return this.ids.generateSpanId();
  }

  /** Internal: an ended sampled request, for the export thread. */
  export(trace: EndedTrace): void {
    this.exportThread.add(trace);
  }

  /**
   * Writes `traceparent`/`tracestate` for `span` into outgoing headers: what the W3C propagator's
   * inject writes for a valid span context (every context here is: made by the SDK's generator or
   * read by its propagator), without the Context and its Map that inject takes, ~800 bytes a request.
   */
  inject(span: SpanContext, headers: OutgoingHttpHeaders): void {
    headers.traceparent = `${W3C_VERSION}-${span.traceId}-${span.spanId}-${(span.traceFlags & 0xff).toString(16).padStart(2, '0')}`;
    if (span.traceState) headers.tracestate = span.traceState.serialize();
  }

  /** Sends what is waiting, until `deadline`, then stops (spans still queued then are dropped). */
  async close(deadline: number): Promise<void> {
    const timeoutMillis = Math.max(0, deadline - Date.now());
    await Promise.race([this.exportThread.shutdown(), new Promise((resolve) => setTimeout(resolve, timeoutMillis).unref())]).catch(() => undefined);
    await this.settings.metrics?.close(deadline);
  }
}
