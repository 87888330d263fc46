import type { OutgoingHttpHeaders } from 'node:http';
import { SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type TextMapPropagator, type Tracer } from '@opentelemetry/api';
import type { UpstreamName } from '../config/index.js';
import type { ChatSampling } from '../validation/index.js';
import { asGatewayError } from '../errors.js';
import type { ResponseTap } from '../metering/index.js';
import type { GenAiMetrics } from './genai-metrics.js';
import { ReplyWatch, requestAttributes } from './genai.js';

/** The gateway's steps that get a span of their own (SPEC 18). */
export type StepName = 'auth' | 'validate' | 'ownership' | 'limits';

export interface TracingSettings {
  /** Prompt and completion text on the client span (`gen_ai.input.messages`, `gen_ai.output.messages`). */
  readonly captureContent: boolean;
  /** gen_ai.provider.name by upstream; an upstream not listed is named by its config name. */
  readonly providerNames: Readonly<Record<UpstreamName, string>>;
  readonly metrics: GenAiMetrics | undefined;
}

/** What a request's spans are made with: the SDK's tracer, the W3C propagator, the settings (built once, by Tracing). */
export interface TraceKit {
  readonly tracer: Tracer;
  readonly propagator: TextMapPropagator;
  readonly settings: TracingSettings;
}

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

/**
 * A performance.now() reading (now, unless given) in ms since the epoch: every span's times are given from this
 * one clock. Left to itself the SDK anchors each span on its own Date.now() reading (whole ms),
 * so a child could seem to end after its parent.
 */
export const spanTime = (performanceNow: number = performance.now()): number => performance.timeOrigin + performanceNow;

const headerSetter = { set: (carrier: OutgoingHttpHeaders, key: string, value: string) => void (carrier[key] = value) };

/** A refusal or failure on a span: the catalogue code as `error.type`, the message as the reason; a 5xx is the span's error status. */
function markRefusal(span: Span, err: unknown): void {
  const error = asGatewayError(err);
  span.setAttribute('error.type', error.code);
  span.setAttribute('tollgate.refusal.reason', error.message);
  if (error.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
}

/** Who the request was for and what it cost, on the SERVER and CLIENT spans (SPEC 18). */
function tollgateAttributes(outcome: RequestOutcome): Attributes {
  const attributes: Attributes = {};
  if (outcome.team !== undefined) attributes['tollgate.team'] = outcome.team;
  if (outcome.project !== undefined) attributes['tollgate.project'] = outcome.project;
  if (outcome.keyId !== undefined) attributes['tollgate.key_id'] = outcome.keyId;
  if (outcome.costNanos !== undefined) attributes['tollgate.cost'] = outcome.costNanos / 1e9;
  return attributes;
}

/**
 * One request's spans, made with the SDK's tracer: the SERVER span, a span per step, and the
 * upstream CLIENT span. An unsampled request has only its SERVER span's ids (to propagate and to
 * log): every sampler decides a trace as one, so its steps and hop make no span.
 */
export class RequestTrace {
  readonly traceId: string;
  private readonly recording: boolean;
  /** The step under way (begin() to end() or refused()), and its name. */
  private step: Span | undefined;
  private stepName: StepName | undefined;
  private client: Span | undefined;
  private clientContext: Context | undefined;
  /** The chat the hop is for, and when it left (kept for the GenAI metrics also when unsampled). */
  private chat: { readonly upstream: UpstreamName; readonly model: string } | undefined;
  private upstreamStartedAt = 0;
  private watch: ReplyWatch | undefined;
  private refusal: unknown;
  /** Set once finish() ended the spans: what happens after (a client that left) is not theirs. */
  private ended = false;

  constructor(
    private readonly kit: TraceKit,
    private readonly server: Span,
    /** The SERVER span's context: its steps' and hop's parent. */
    private readonly context: Context,
  ) {
    this.traceId = server.spanContext().traceId;
    this.recording = server.isRecording();
  }

  /**
   * A step's span starts: the pipeline marks each step's start and end around its call rather
   * than handing the step here to be wrapped (no promise or closure per step). A step that
   * refuses the request is ended by refused(), with the reason.
   */
  begin(name: StepName): void {
    if (!this.recording || this.ended) return;
    this.step = this.kit.tracer.startSpan(name, { kind: SpanKind.INTERNAL, startTime: spanTime() }, this.context);
    this.stepName = name;
  }

  /** The step under way ended; `describe` gives its attributes from what it returned (called only when the span records). */
  end(): void;
  end<T>(result: T, describe: (result: T) => Attributes): void;
  end<T>(result?: T, describe?: (result: T) => Attributes): void {
    const step = this.step;
    if (step === undefined) return;
    this.step = undefined;
    if (describe !== undefined) step.setAttributes(describe(result as T));
    step.end(spanTime());
  }

  /** Starts the CLIENT span of the upstream hop (`chat <model>` with the GenAI conventions on chat routes). */
  startUpstream(call: UpstreamCall): void {
    const { chat } = call;
    if (chat) this.chat = { upstream: call.upstream, model: chat.model };
    this.upstreamStartedAt = performance.now();
    // Unsampled: the upstream is sent the SERVER span's context (its trace id, not sampled).
    if (!this.recording || this.ended) return;
    const attributes: Attributes = { 'http.request.method': call.method, 'tollgate.upstream': call.upstream };
    if (chat) {
      attributes['gen_ai.operation.name'] = 'chat';
      attributes['gen_ai.provider.name'] = this.kit.settings.providerNames[call.upstream] ?? call.upstream;
      attributes['gen_ai.request.model'] = chat.model;
      requestAttributes(chat.sampling, chat.raw, this.kit.settings.captureContent, attributes);
    }
    this.client = this.kit.tracer.startSpan(chat ? `chat ${chat.model}` : call.method, { kind: SpanKind.CLIENT, attributes, startTime: spanTime(this.upstreamStartedAt) }, this.context);
    this.clientContext = trace.setSpan(this.context, this.client);
  }

  /** `traceparent`/`tracestate` for the upstream: the CLIENT span's (the SERVER span's before it starts, or when not sampled). */
  injectInto(headers: OutgoingHttpHeaders): void {
    this.kit.propagator.inject(this.clientContext ?? this.context, headers, headerSetter);
  }

  /** The upstream's status on the CLIENT span. */
  upstreamAnswered(status: number): void {
    if (!this.ended) this.client?.setAttribute('http.response.status_code', status);
  }

  /** Watches a chat reply on its way to the client (id, finish reasons, text, a stream's first chunk) when its span records or the GenAI metrics are on. */
  watchReply(tap: ResponseTap, streamed: boolean): ResponseTap {
    if (!this.chat || !(this.client || this.kit.settings.metrics)) return tap;
    return (this.watch = new ReplyWatch(tap, streamed));
  }

  /** The request was refused or failed (the error catalogue's code and message): the step under way, if any, refused it. */
  refused(err: unknown): void {
    if (this.ended) return;
    this.refusal = err;
    const step = this.step;
    if (step === undefined) return;
    this.step = undefined;
    markRefusal(step, err);
    if (this.stepName === 'limits') step.setAttribute('tollgate.limits.decision', 'refused');
    step.end(spanTime());
  }

  /** Ends the request's spans with what completion learned, and records the GenAI metrics. */
  finish(outcome: RequestOutcome): void {
    if (this.ended) return;
    const endedAt = performance.now();
    this.ended = true;
    this.watch?.stop();
    // A step still under way (the client left during it) ends with the request.
    this.step?.end(spanTime(endedAt));
    this.step = undefined;
    if (this.chat && this.kit.settings.metrics) this.recordMetrics(outcome, endedAt);
    if (!this.recording) return;
    const tollgate = tollgateAttributes(outcome);
    if (this.client) this.finishClient(outcome, tollgate, endedAt);
    const { server } = this;
    server.setAttributes(tollgate);
    server.setAttribute('http.response.status_code', outcome.status);
    if (this.refusal !== undefined) markRefusal(server, this.refusal);
    else if (outcome.status >= 500) server.setStatus({ code: SpanStatusCode.ERROR });
    server.end(spanTime(endedAt));
  }

  private finishClient(outcome: RequestOutcome, tollgate: Attributes, endedAt: number): void {
    const client = this.client!;
    client.setAttributes(tollgate);
    if (this.chat) client.setAttributes(this.replyAttributes(outcome));
    if (outcome.aborted) client.setAttribute('tollgate.aborted', true);
    if (outcome.status >= 500 && this.refusal !== undefined) markRefusal(client, this.refusal);
    client.end(spanTime(endedAt));
  }

  private replyAttributes(outcome: RequestOutcome): Attributes {
    const attributes: Attributes = {};
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (outcome.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = outcome.inputTokens;
    if (outcome.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = outcome.outputTokens;
    const watch = this.watch;
    if (!watch) return attributes;
    if (watch.firstChunkAt !== undefined) attributes['gen_ai.response.time_to_first_chunk'] = (watch.firstChunkAt - this.upstreamStartedAt) / 1000;
    const { captureContent } = this.kit.settings;
    const facts = watch.facts(captureContent);
    if (facts.id !== undefined) attributes['gen_ai.response.id'] = facts.id;
    if (facts.finishReasons.length > 0) attributes['gen_ai.response.finish_reasons'] = facts.finishReasons;
    if (captureContent) {
      attributes['gen_ai.output.messages'] = JSON.stringify([
        { role: 'assistant', parts: [{ type: 'text', content: facts.text }], finish_reason: facts.finishReasons[0] ?? null },
      ]);
    }
    return attributes;
  }

  private recordMetrics(outcome: RequestOutcome, endedAt: number): void {
    const chat = this.chat!;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.kit.settings.providerNames[chat.upstream] ?? chat.upstream,
      'gen_ai.request.model': chat.model,
    };
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (this.refusal !== undefined) attributes['error.type'] = asGatewayError(this.refusal).code;
    const start = this.upstreamStartedAt;
    const firstChunkAt = this.watch?.firstChunkAt;
    this.kit.settings.metrics!.record({
      attributes,
      inputTokens: outcome.inputTokens,
      outputTokens: outcome.outputTokens,
      durationSeconds: (endedAt - start) / 1000,
      firstChunkSeconds: firstChunkAt === undefined ? undefined : (firstChunkAt - start) / 1000,
    });
  }
}
