import { SpanKind, TraceFlags, type AttributeValue, type HrTime } from '@opentelemetry/api';
import { addHrTimes, millisToHrTime } from '@opentelemetry/core';
import { AttributeList, type RequestRecord, type StepFacts } from './export-messages.js';
import { TAG, writeKey, writeValue } from './otlp-fields.js';
import { hexInto, type ProtobufWriter } from './protobuf-writer.js';

/**
 * Traced requests as OTLP protobuf, written straight from their records: the bytes the SDK's
 * ProtobufTraceSerializer writes for the same spans handed to it as ReadableSpans (the SDK's
 * span order, fields and defaults; test/unit/tracing/otlp-spans.test.ts holds the two side by
 * side), without making the span objects, their time tuples and their binary ids first, and
 * without sizing every message before writing it. That work was most of the export thread's
 * CPU, and on a machine whose cores are busy its CPU is taken from requests (docs/tracing.md, "Cost").
 */

/** Span.flags (field 16, fixed32): two bytes of tag. */
const SPAN_FLAGS_TAG = [0x85, 0x01] as const;
/** Span.flags: the W3C trace flags, and whether the parent is known to be remote (and is). */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;
/** OTLP's SpanKind counts from UNSPECIFIED (0): the API's kinds are one lower. */
const otlpKind = (kind: SpanKind): number => kind + 1;
/** OTLP's status codes: UNSET 0, ERROR 2. */
const STATUS_UNSET = 0;
const STATUS_ERROR = 2;

/** A span's dropped attribute, event and link counts: always 0 here, written as the SDK writes them. */
const DROPPED_COUNTS = Buffer.from([TAG.spanDroppedAttributes, 0, TAG.spanDroppedEvents, 0, TAG.spanDroppedLinks, 0]);
/** Span.flags, its tag and value: sampled, and whether the parent is remote. */
const flagsField = (remoteParent: boolean): Buffer => {
  const field = Buffer.from([...SPAN_FLAGS_TAG, 0, 0, 0, 0]);
  field.writeUInt32LE(TraceFlags.SAMPLED | FLAG_HAS_IS_REMOTE | (remoteParent ? FLAG_IS_REMOTE : 0), SPAN_FLAGS_TAG.length);
  return field;
};
const FLAGS = flagsField(false);
const FLAGS_REMOTE_PARENT = flagsField(true);
/** What follows the attributes of a span with no error, which is most of them: counts, an UNSET status, flags. */
const unsetTail = (flags: Buffer): Buffer => Buffer.concat([DROPPED_COUNTS, Buffer.from([TAG.spanStatus, 2, TAG.statusCode, STATUS_UNSET]), flags]);
const UNSET_TAIL = unsetTail(FLAGS);
const UNSET_TAIL_REMOTE_PARENT = unsetTail(FLAGS_REMOTE_PARENT);

/** A key's `KeyValue.key` field, encoded once: the gateway's attribute keys are a few dozen names in its code. */
const MAX_CACHED_KEYS = 256;
/** A whole attribute field is kept for reuse only when this small (a route, a model, a team; never a prompt). */
const MAX_CACHED_FIELD_BYTES = 256;

/**
 * What the encoder keeps for an attribute key: the key encoded, and the whole `KeyValue` field of
 * a value it met twice in a row (most of a request's values are the last request's: method,
 * route, scheme, model, provider, team, project, status, the limits span's frozen arrays), copied
 * from then on while it holds. A value that changes every request (tokens, cost) is never kept,
 * so it costs no copy.
 */
interface KeyEntry {
  readonly key: Buffer;
  /** The value last written under this key. */
  last: AttributeValue | undefined;
  /** A value met twice in a row, and its whole field (tag, length, key, value). */
  keptValue: AttributeValue | undefined;
  keptField: Buffer | undefined;
}

/**
 * A value whose field may be kept: a scalar, or a frozen array met again as the same object (the
 * limits span's, given again while a key's limits stay the same): neither can have changed since.
 */
const keepable = (value: AttributeValue | undefined): boolean =>
  typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || (Array.isArray(value) && Object.isFrozen(value));

/** Hex span ids for the steps (a test's, to compare with the SDK's output); by default they are random bytes written in place. */
export type SpanIdSource = () => string;

/** The ids a request's spans share, as bytes: the trace id (16), then the SERVER span's id (8), every other span's parent. */
const TRACE_ID_AT = 0;
const SERVER_ID_AT = 16;
const TWO_POW_32 = 0x1_0000_0000;

export class OtlpSpanEncoder {
  private readonly origin: HrTime;
  private readonly keys = new Map<string, KeyEntry>();
  /** The request being written: its shared ids, and its start as fixed64 nanoseconds in 32-bit halves. */
  private readonly ids = new Uint8Array(24);
  private startLow = 0;
  private startHigh = 0;

  constructor(
    /** Where the spans are written. */
    private readonly writer: ProtobufWriter,
    /** The request thread's performance.timeOrigin (ms since the epoch): records count from it. */
    timeOrigin: number,
    private readonly stepSpanId?: SpanIdSource,
  ) {
    this.origin = millisToHrTime(timeOrigin);
  }

  /**
   * Writes a request's spans (its steps, its CLIENT span, its SERVER span: the order they were
   * handed to the SDK) as `ScopeSpans.spans` fields. A record whose ids are not hex of their
   * length writes nothing and returns false. The ids every span carries are read once, and each
   * span's times are the request's start plus its µs (what the SDK's hrtime arithmetic gives).
   */
  write(record: RequestRecord | RequestRecord<AttributeList>): boolean {
    const mark = this.writer.pos;
    const serverId = record.server.id;
    let ok = hexInto(this.ids, TRACE_ID_AT, record.traceId, 16) && hexInto(this.ids, SERVER_ID_AT, serverId, 8);
    this.setStart(addHrTimes(this.origin, millisToHrTime(record.start)));
    const traceState = record.parent?.traceState ?? '';
    for (const step of record.steps) ok &&= this.span(step, SpanKind.INTERNAL, this.stepSpanId?.(), traceState);
    if (record.client) ok &&= this.span(record.client, SpanKind.CLIENT, record.client.id, traceState);
    ok &&= this.span(record.server, SpanKind.SERVER, undefined, traceState, record.parent?.spanId);
    if (!ok) this.writer.pos = mark;
    return ok;
  }

  /**
   * One span. The SERVER span's id is the request's (read once), its parent the caller's span
   * (`remoteParent`) or none; every other span's parent is the SERVER span, and its id is `spanId`
   * in hex, or random bytes when there is none (a step's).
   */
  private span(facts: StepFacts | StepFacts<AttributeList>, kind: SpanKind, spanId: string | undefined, traceState: string, remoteParent?: string): boolean {
    const isServer = kind === SpanKind.SERVER;
    const w = this.writer;
    const ids = this.ids;
    w.byte(TAG.field2);
    const at = w.begin();
    w.byte(TAG.spanTraceId);
    w.lengthPrefixed(ids, TRACE_ID_AT, 16);
    w.byte(TAG.spanId);
    let ok = true;
    if (isServer) w.lengthPrefixed(ids, SERVER_ID_AT, 8);
    else if (spanId === undefined) w.randomBytes(8);
    else ok = w.hexBytes(spanId, 8);
    if (traceState !== '') {
      w.byte(TAG.spanTraceState);
      w.string(traceState);
    }
    if (!isServer) {
      w.byte(TAG.spanParentId);
      w.lengthPrefixed(ids, SERVER_ID_AT, 8);
    } else if (remoteParent) {
      w.byte(TAG.spanParentId);
      ok = w.hexBytes(remoteParent, 8) && ok;
    }
    w.byte(TAG.spanName);
    w.string(facts.name);
    w.byte(TAG.spanKind);
    w.varint(otlpKind(kind));
    w.byte(TAG.spanStart);
    this.time(facts.start);
    w.byte(TAG.spanEnd);
    this.time(facts.end);
    const { attributes } = facts;
    if (attributes instanceof AttributeList) {
      const { pairs } = attributes;
      for (let i = 0; i < pairs.length; i += 2) this.attribute(pairs[i] as string, pairs[i + 1]);
    } else for (const key in attributes) this.attribute(key, attributes[key]);
    const parentIsRemote = remoteParent !== undefined;
    if (facts.error === undefined) w.raw(parentIsRemote ? UNSET_TAIL_REMOTE_PARENT : UNSET_TAIL);
    else {
      w.raw(DROPPED_COUNTS);
      w.byte(TAG.spanStatus);
      const status = w.begin();
      if (facts.error !== '') {
        w.byte(TAG.statusMessage);
        w.string(facts.error);
      }
      w.byte(TAG.statusCode);
      w.byte(STATUS_ERROR);
      w.end(status);
      w.raw(parentIsRemote ? FLAGS_REMOTE_PARENT : FLAGS);
    }
    w.end(at);
    return ok;
  }

  /**
   * The request's start as fixed64 nanoseconds (seconds × 10^9 + nanos passes 2^53: seconds are
   * split at 2^16 so that each product is exact), kept as two 32-bit halves.
   */
  private setStart([seconds, nanos]: HrTime): void {
    const lowPart = (seconds % 0x10000) * 1_000_000_000 + nanos;
    const highPart = Math.floor(seconds / 0x10000) * 1_000_000_000;
    const low = (highPart % 0x10000) * 0x10000 + lowPart;
    this.startLow = low % TWO_POW_32;
    this.startHigh = (Math.floor(highPart / 0x10000) + Math.floor(low / TWO_POW_32)) >>> 0;
  }

  /** A span time, the request's start plus whole µs, as fixed64 nanoseconds (µs × 1000 stays far below 2^53). */
  private time(micros: number): void {
    const low = this.startLow + micros * 1000;
    const carry = Math.floor(low / TWO_POW_32);
    this.writer.fixed64(low - carry * TWO_POW_32, (this.startHigh + carry) >>> 0);
  }

  /** One span attribute: a `KeyValue` in `Span.attributes`. */
  private attribute(key: string, value: AttributeValue | undefined): void {
    const w = this.writer;
    const entry = this.keys.get(key);
    if (entry !== undefined && entry.keptField !== undefined && entry.keptValue === value) {
      w.raw(entry.keptField);
      return;
    }
    const fieldStart = w.pos;
    w.byte(TAG.spanAttribute);
    const at = w.begin();
    if (entry) w.raw(entry.key);
    else {
      const from = w.pos;
      writeKey(w, key);
      if (this.keys.size < MAX_CACHED_KEYS) this.keys.set(key, { key: w.copyFrom(from), last: undefined, keptValue: undefined, keptField: undefined });
    }
    writeValue(w, value);
    w.end(at);
    if (entry === undefined) return;
    if (entry.last === value && keepable(value) && w.pos - fieldStart <= MAX_CACHED_FIELD_BYTES) {
      entry.keptValue = value;
      entry.keptField = w.copyFrom(fieldStart);
    }
    entry.last = value;
  }
}
