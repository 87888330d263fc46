import type { OutgoingHttpHeaders } from 'node:http';
import { TraceFlags, type Attributes, type SpanContext } from '@opentelemetry/api';
import type { UpstreamName } from '../config/index.js';
import type { ChatSampling } from '../validation/index.js';
import { asGatewayError } from '../errors.js';
import type { ResponseTap } from '../metering/index.js';
import { microsSince, type EndedTrace, type RemoteParent, type RequestRecord, type SpanFacts, type StepFacts } from './export-messages.js';
import { ReplyWatch, requestAttributes } from './genai.js';
import type { Tracing } from './tracing.js';

/** The gateway's steps that get a span of their own (SPEC 18). */
export type StepName = 'auth' | 'validate' | 'ownership' | 'limits';

/** A step's attributes when it has none to give: shared, never written to. */
const NO_ATTRIBUTES: Attributes = Object.freeze({});

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

/** A refusal or failure on a span: the catalogue code as `error.type`, the message as the reason; a 5xx is the span's error status. */
function markRefusal(attributes: Attributes, err: unknown): string | undefined {
  const error = asGatewayError(err);
  attributes['error.type'] = error.code;
  attributes['tollgate.refusal.reason'] = error.message;
  return error.status >= 500 ? error.message : undefined;
}

/** Who the request was for and what it cost, on the SERVER and CLIENT spans (SPEC 18). */
function addTollgateAttributes(attributes: Attributes, outcome: RequestOutcome): void {
  if (outcome.team !== undefined) attributes['tollgate.team'] = outcome.team;
  if (outcome.project !== undefined) attributes['tollgate.project'] = outcome.project;
  if (outcome.keyId !== undefined) attributes['tollgate.key_id'] = outcome.keyId;
  if (outcome.costNanos !== undefined) attributes['tollgate.cost'] = outcome.costNanos / 1e9;
}

/** The CLIENT span while the hop is under way. */
interface ClientHop {
  readonly id: string;
  readonly name: string;
  readonly start: number;
  readonly attributes: Attributes;
}

/**
 * One request's spans, as facts noted on the request thread: the SERVER span, its steps and
 * the upstream CLIENT span, each with its id, times and attributes. On finish a sampled
 * request goes to the export thread's next shipment, which builds its record and writes it as
 * OTLP spans. An unsampled request notes nothing: it only has ids to propagate.
 */
export class RequestTrace implements EndedTrace {
  readonly traceId: string;
  private readonly start = performance.now();
  private readonly sampled: boolean;
  private readonly steps: StepFacts[] = [];
  /** The step under way (begin() to end() or refused()), and when it started. */
  private stepName: StepName | undefined;
  private stepStart = 0;
  private client: ClientHop | undefined;
  private clientContext: SpanContext | undefined;
  private watch: ReplyWatch | undefined;
  /**
   * The chat the upstream hop is for (its upstream and model), not the call itself: the call
   * holds the request's body, which an ended request waiting for its shipment must not keep.
   */
  private chat: { readonly upstream: UpstreamName; readonly model: string } | undefined;
  private refusal: unknown;
  /**
   * Set when the request ended: its record is handed on, and written later with others (export
   * thread), so what happens after (a step or an upstream answer still under way when the client
   * left) is not added to it.
   */
  private ended = false;
  /** How the request ended, and when: what its record is built from. */
  private outcome: RequestOutcome | undefined;
  private endedAt = 0;

  constructor(
    private readonly tracing: Tracing,
    private readonly server: SpanContext,
    private readonly parent: SpanContext | undefined,
    private readonly name: string,
    private readonly attributes: Attributes,
  ) {
    this.traceId = server.traceId;
    this.sampled = (server.traceFlags & TraceFlags.SAMPLED) !== 0;
  }

  /**
   * The span of a step starts: the pipeline marks each step's start and end around its call
   * (begin, await the step, end), rather than handing the step here to be wrapped: a wrapper's
   * promise, its handlers and the closure around the call cost about 270 bytes and a microtask a
   * step (bench/comparisons/traced-request-allocations.ts). A step that refuses the request is
   * ended by refused(), with the reason.
   */
  begin(name: StepName): void {
    if (!this.sampled) return;
    this.stepName = name;
    this.stepStart = performance.now();
  }

  /** The step under way ended; `describe` gives its attributes from what it returned (called only when the span is recorded). */
  end(): void;
  end<T>(result: T, describe: (result: T) => Attributes): void;
  end<T>(result?: T, describe?: (result: T) => Attributes): void {
    const name = this.stepName;
    if (name === undefined) return;
    this.stepName = undefined;
    this.noteStep(name, this.stepStart, describe === undefined ? NO_ATTRIBUTES : describe(result as T), undefined);
  }

  private noteStep(name: StepName, start: number, attributes: Attributes, error: string | undefined): void {
    if (this.ended) return;
    this.steps.push({ name, start: microsSince(this.start, start), end: microsSince(this.start, performance.now()), attributes, error });
  }

  /** Starts the CLIENT span of the upstream hop (`chat <model>` with the GenAI conventions on chat routes). */
  startUpstream(call: UpstreamCall): void {
    // Unsampled: the upstream is sent the SERVER span's context (its trace id, not sampled), and
    // only the GenAI metrics, if on, need the hop's timing.
    if (!this.sampled && !this.tracing.settings.metrics) return;
    if (call.chat) this.chat = { upstream: call.upstream, model: call.chat.model };
    const { chat } = call;
    const attributes: Attributes = { 'http.request.method': call.method, 'tollgate.upstream': call.upstream };
    if (chat) {
      attributes['gen_ai.operation.name'] = 'chat';
      attributes['gen_ai.provider.name'] = this.tracing.settings.providerNames[call.upstream];
      attributes['gen_ai.request.model'] = chat.model;
      if (this.sampled) requestAttributes(chat.sampling, chat.raw, this.tracing.settings.captureContent, attributes);
    }
    const id = this.tracing.spanId();
    this.client = { id, name: chat ? `chat ${chat.model}` : call.method, start: performance.now(), attributes };
    if (this.sampled) this.clientContext = { ...this.server, spanId: id };
  }

  /** `traceparent`/`tracestate` for the upstream: the CLIENT span's (the SERVER span's before it starts, or when not sampled). */
  injectInto(headers: OutgoingHttpHeaders): void {
    this.tracing.inject(this.clientContext ?? this.server, headers);
  }

  /** The upstream's status on the CLIENT span. */
  upstreamAnswered(status: number): void {
    if (this.client && !this.ended) this.client.attributes['http.response.status_code'] = status;
  }

  /**
   * Watches a chat reply on its way to the client (id, finish reasons, text, and on a stream its
   * first chunk) when the request is sampled or the GenAI metrics are on.
   */
  watchReply(tap: ResponseTap, streamed: boolean): ResponseTap {
    if (!this.chat || !this.client) return tap;
    return (this.watch = new ReplyWatch(tap, streamed));
  }

  /** The request was refused or failed (the error catalogue's code and message): the step under way, if any, refused it. */
  refused(err: unknown): void {
    if (this.ended) return;
    this.refusal = err;
    const name = this.stepName;
    if (name === undefined) return;
    this.stepName = undefined;
    const attributes: Attributes = {};
    const error = markRefusal(attributes, err);
    if (name === 'limits') attributes['tollgate.limits.decision'] = 'refused';
    this.noteStep(name, this.stepStart, attributes, error);
  }

  /**
   * Ends the request's spans with what completion learned, records the GenAI metrics, and hands a
   * sampled request to the export thread. Its record is built there, when the batch it is in is
   * written (record()): the reply scan and the attributes run with the encoder, a batch at a time,
   * not between two requests' work (docs/tracing.md, "Cost").
   */
  finish(outcome: RequestOutcome): void {
    const end = performance.now();
    this.ended = true;
    this.watch?.stop(this.tracing.settings.captureContent);
    if (this.client && this.chat && this.tracing.settings.metrics) this.recordMetrics(outcome, end);
    if (!this.sampled) return;
    this.outcome = outcome;
    this.endedAt = end;
    this.tracing.export(this);
  }

  /** How many spans the request's record holds (the export queue is bounded in spans). */
  spanCount(): number {
    return 1 + this.steps.length + (this.client === undefined ? 0 : 1);
  }

  /** The ended request's record: its SERVER span, steps and CLIENT span as facts (built once, by the export thread's shipment). */
  record(): RequestRecord {
    const outcome = this.outcome!;
    const end = this.endedAt;
    const { attributes } = this;
    addTollgateAttributes(attributes, outcome);
    attributes['http.response.status_code'] = outcome.status;
    let error: string | undefined;
    if (this.refusal !== undefined) error = markRefusal(attributes, this.refusal);
    else if (outcome.status >= 500) error = '';
    return {
      traceId: this.traceId,
      start: this.start,
      parent: this.remoteParent(),
      server: { id: this.server.spanId, name: this.name, start: 0, end: microsSince(this.start, end), attributes, error },
      steps: this.steps,
      client: this.client && this.clientFacts(outcome, end),
    };
  }

  private remoteParent(): RemoteParent | undefined {
    const { parent } = this;
    if (!parent) return undefined;
    return { spanId: parent.spanId, traceState: parent.traceState?.serialize() };
  }

  private clientFacts(outcome: RequestOutcome, end: number): SpanFacts {
    const { id, name, start, attributes } = this.client!;
    addTollgateAttributes(attributes, outcome);
    if (this.chat) this.addReply(attributes, outcome);
    if (outcome.aborted) attributes['tollgate.aborted'] = true;
    const error = outcome.status >= 500 && this.refusal !== undefined ? markRefusal(attributes, this.refusal) : undefined;
    return { id, name, start: microsSince(this.start, start), end: microsSince(this.start, end), attributes, error };
  }

  private addReply(attributes: Attributes, outcome: RequestOutcome): void {
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (outcome.inputTokens !== undefined) attributes['gen_ai.usage.input_tokens'] = outcome.inputTokens;
    if (outcome.outputTokens !== undefined) attributes['gen_ai.usage.output_tokens'] = outcome.outputTokens;
    const watch = this.watch;
    if (!watch) return;
    if (watch.firstChunkAt !== undefined) attributes['gen_ai.response.time_to_first_chunk'] = (watch.firstChunkAt - this.client!.start) / 1000;
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
    const chat = this.chat!;
    const attributes: Attributes = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': this.tracing.settings.providerNames[chat.upstream],
      'gen_ai.request.model': chat.model,
    };
    if (outcome.responseModel !== undefined) attributes['gen_ai.response.model'] = outcome.responseModel;
    if (this.refusal !== undefined) attributes['error.type'] = asGatewayError(this.refusal).code;
    const start = this.client!.start;
    const firstChunkAt = this.watch?.firstChunkAt;
    this.tracing.settings.metrics!.record({
      attributes,
      inputTokens: outcome.inputTokens,
      outputTokens: outcome.outputTokens,
      durationSeconds: (endedAt - start) / 1000,
      firstChunkSeconds: firstChunkAt === undefined ? undefined : (firstChunkAt - start) / 1000,
    });
  }
}
