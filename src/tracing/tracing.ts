import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import { ROOT_CONTEXT, SpanKind, trace, type Attributes, type TextMapGetter, type TextMapPropagator } from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import type { GatewayError } from '../errors.js';
import { RequestTrace, spanTime, type TraceKit, type TracingSettings } from './request-trace.js';

/** What a request span reads from the request: its headers (one value each, as the propagator wants). */
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

/** The W3C Trace Context headers: read from the client, written for the upstream (never passed on as they came). */
export const TRACE_CONTEXT_HEADERS: readonly string[] = ['traceparent', 'tracestate'];

/**
 * The HTTP conventions' known methods: any other is `_OTHER` (its name in
 * `http.request.method_original`), so a client cannot coin span names. Every method a route may
 * accept (config routes: GET, HEAD, POST, PUT, PATCH, DELETE, OPTIONS) is among them.
 */
const KNOWN_METHODS: ReadonlySet<string> = new Set(['CONNECT', 'DELETE', 'GET', 'HEAD', 'OPTIONS', 'PATCH', 'POST', 'PUT', 'TRACE', 'QUERY']);

/** The SERVER span's HTTP semantic-convention attributes, from the request. */
function serverAttributes(req: IncomingMessage, route: string | undefined, method: string, known: boolean): Attributes {
  const path = req.url ?? '/';
  const query = path.indexOf('?');
  const attributes: Attributes = {
    'http.request.method': known ? method : '_OTHER',
    'url.path': query < 0 ? path : path.slice(0, query),
    'url.scheme': 'http',
  };
  if (!known) attributes['http.request.method_original'] = method;
  if (route !== undefined) attributes['http.route'] = route;
  const agent = req.headers['user-agent'];
  if (agent !== undefined) attributes['user_agent.original'] = agent;
  return attributes;
}

/**
 * The SDK's tracer provider (its sampler, id generator, BatchSpanProcessor and OTLP exporter)
 * and the W3C propagator; `undefined` in its place means tracing is off.
 */
export class Tracing {
  private readonly kit: TraceKit;

  constructor(
    private readonly provider: BasicTracerProvider,
    propagator: TextMapPropagator,
    readonly settings: TracingSettings,
  ) {
    this.kit = { tracer: provider.getTracer('tollgate'), propagator, settings };
  }

  /**
   * The SERVER span of a /v1 request, continuing the client's `traceparent` (a malformed one is
   * ignored by the propagator: the request starts a trace of its own). `route` is the template
   * its path matched; without one (a path no route knows) the span is named by the method alone,
   * as the HTTP conventions say.
   */
  startRequest(req: IncomingMessage, route: string | undefined, method: string): RequestTrace {
    const parent = this.kit.propagator.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const known = KNOWN_METHODS.has(method);
    const name = `${known ? method : 'HTTP'}${route === undefined ? '' : ` ${route}`}`;
    // The samplers Tollgate offers decide by trace id and parent alone: the attributes are given
    // once the span records, so an unsampled request builds none.
    const span = this.kit.tracer.startSpan(name, { kind: SpanKind.SERVER, startTime: spanTime() }, parent);
    if (span.isRecording()) span.setAttributes(serverAttributes(req, route, method, known));
    return new RequestTrace(this.kit, span, trace.setSpan(parent, span));
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

  /** Sends what is batched, until `deadline`, then stops (spans still queued then are dropped). */
  async close(deadline: number): Promise<void> {
    const timeoutMillis = Math.max(0, deadline - Date.now());
    await Promise.race([this.provider.shutdown(), new Promise((resolve) => setTimeout(resolve, timeoutMillis).unref())]).catch(() => undefined);
    await this.settings.metrics?.close(deadline);
  }
}
