import { SpanKind, TraceFlags, type HrTime } from '@opentelemetry/api';
import { addHrTimes, millisToHrTime } from '@opentelemetry/core';
import type { EncodedRequests, RecordShipment } from './export-messages.js';
import { TAG, writeNumber } from './otlp-fields.js';
import { hexInto, type ProtobufWriter } from './protobuf-writer.js';
import { END_OF_ATTRIBUTES, FIRST_STRING_REFERENCE, NEW_STRING, TapeCursor, VALUE } from './record-tape.js';
import { RandomIdBytes } from './span-ids.js';

/**
 * Traced requests as OTLP protobuf, written straight from the tape the request thread wrote
 * (record-tape.ts): the bytes the SDK's ProtobufTraceSerializer writes for the same spans handed
 * to it as ReadableSpans (the SDK's span order, fields and defaults; test/unit/tracing/otlp-spans.test.ts
 * holds the two side by side), without making the span objects, their time tuples and their
 * binary ids first, and without sizing every message before writing it. Nor is the tape read
 * back into records: its strings are copied into the spans as the bytes they are, and a value
 * the tape marks "as before" is its key's last field, copied (docs/tracing.md, "Cost").
 */

/** Span.flags (field 16, fixed32): two bytes of tag. */
const SPAN_FLAGS_TAG = [0x85, 0x01] as const;
/** Span.flags: the W3C trace flags, and whether the parent is known to be remote (and is). */
const FLAG_HAS_IS_REMOTE = 0x100;
const FLAG_IS_REMOTE = 0x200;
/** OTLP's SpanKind counts from UNSPECIFIED (0): the API's kinds are one lower. */
const OTLP_KIND_INTERNAL = SpanKind.INTERNAL + 1;
const OTLP_KIND_SERVER = SpanKind.SERVER + 1;
const OTLP_KIND_CLIENT = SpanKind.CLIENT + 1;
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

/** A whole attribute field met again "as before" is kept for copying only when this small (a route, a model, a team; never a prompt). */
const MAX_KEPT_FIELD_BYTES = 256;

/** Hex span ids for the steps (a test's, to compare with the SDK's output); by default they are random bytes written in place. */
export type SpanIdSource = () => string;

/**
 * Where the ids a request's spans share lie in `ids`, as bytes: the trace id (16), the SERVER
 * span's id (8, every other span's parent), the CLIENT span's and the caller's (8 each); then a
 * step's id from a test's source.
 */
const TRACE_ID_AT = 0;
const SERVER_ID_AT = 16;
const CLIENT_ID_AT = 24;
const PARENT_ID_AT = 32;
const STEP_ID_AT = 40;
const TWO_POW_32 = 0x1_0000_0000;

/** A span's place in its request: which id it has and which parent. */
const enum Role {
  step,
  client,
  server,
}

export class OtlpSpanEncoder {
  private readonly origin: HrTime;
  /** The request being written: its shared ids, and its start as fixed64 nanoseconds in 32-bit halves. */
  private readonly ids = new Uint8Array(48);
  private startLow = 0;
  private startHigh = 0;
  /** Whether the request's caller span is known (its SERVER span's parent), and where its trace state lies on the tape (empty: none). */
  private remoteParent = false;
  private traceStateStart = 0;
  private traceStateEnd = 0;

  /** The tape being read, and what it has named so far: each string's bytes (from its length) by number. */
  private tape = new TapeCursor(Buffer.alloc(0));
  private stringStarts: number[] = [];
  private stringEnds: number[] = [];
  /** By key number: where its last value lies on the tape (none yet: undefined), and that field as written, once met "as before". */
  private valueAt: number[] = [];
  private keptField: (Buffer | undefined)[] = [];
  /** The steps' span ids, when no test gives them: nothing outside the trace names a step, so they are made here, as bytes. */
  private readonly stepIds = new RandomIdBytes();

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
   * A shipment's records written as OTLP spans, straight from its tape, and how many spans were
   * lost: a record that cannot be written (ids that are not hex), and every record after a point
   * where the tape cannot be read. The bytes are a copy of their own (the queue keeps them until
   * their requests are exported, and the writer is reused).
   */
  writeShipment(shipment: RecordShipment): { requests: EncodedRequests; lost: number } {
    const w = this.writer;
    const ends: number[] = [];
    const spans: number[] = [];
    let lost = 0;
    w.reset();
    this.startTape(shipment.tape);
    for (let i = 0; i < shipment.spans.length; i++) {
      const count = shipment.spans[i]!;
      try {
        if (this.write()) {
          ends.push(w.pos);
          spans.push(count);
          continue;
        }
      } catch {
        // Where the tape stopped making sense, so does the rest of it: the spans written are kept.
        w.pos = ends.length > 0 ? ends[ends.length - 1]! : 0;
        for (let rest = i; rest < shipment.spans.length; rest++) lost += shipment.spans[rest]!;
        break;
      }
      lost += count;
    }
    return { requests: { bytes: new Uint8Array(w.view(0, w.pos)), ends, spans }, lost };
  }

  /** Starts on a shipment's tape: its strings and values count from here. */
  startTape(tape: Uint8Array): void {
    this.tape = new TapeCursor(Buffer.from(tape.buffer, tape.byteOffset, tape.byteLength));
    this.stringStarts = [];
    this.stringEnds = [];
    this.valueAt = [];
    this.keptField = [];
  }

  /** Whether the tape has no more records. */
  get done(): boolean {
    return this.tape.done;
  }

  /**
   * Writes the tape's next request as `ScopeSpans.spans` fields (its steps, its CLIENT span, its
   * SERVER span: the order they were handed to the SDK). A request whose ids are not hex of their
   * length writes nothing and returns false; a tape this module cannot read throws, and nothing
   * after that point of it can be read. The ids every span carries are read once, and each span's
   * times are the request's start plus its µs (what the SDK's hrtime arithmetic gives).
   */
  write(): boolean {
    const w = this.writer;
    const tape = this.tape;
    const mark = w.pos;
    let ok = this.hexId(TRACE_ID_AT, 16);
    this.setStart(addHrTimes(this.origin, millisToHrTime(tape.double())));
    this.remoteParent = tape.byte() === 1;
    this.traceStateStart = this.traceStateEnd = 0;
    if (this.remoteParent) {
      ok = this.hexId(PARENT_ID_AT, 8) && ok;
      if (tape.byte() === 1) {
        const start = tape.pos;
        const end = tape.skipString();
        // An empty trace state (its length byte alone) is written as none, as the SDK writes it.
        if (end - start > 1) {
          this.traceStateStart = start;
          this.traceStateEnd = end;
        }
      }
    }
    ok = this.hexId(SERVER_ID_AT, 8) && ok;
    const steps = tape.varint();
    for (let i = 0; i < steps; i++) this.span(Role.step);
    if (tape.byte() === 1) {
      ok = this.hexId(CLIENT_ID_AT, 8) && ok;
      this.span(Role.client);
    }
    this.span(Role.server);
    if (!ok) w.pos = mark;
    return ok;
  }

  /**
   * One span, from its name on the tape. The SERVER span's parent is the caller's span, or none;
   * every other span's parent is the SERVER span. A step's id is random bytes (or the test's).
   */
  private span(role: Role): void {
    const w = this.writer;
    const ids = this.ids;
    w.byte(TAG.field2);
    const at = w.begin();
    w.byte(TAG.spanTraceId);
    w.lengthPrefixed(ids, TRACE_ID_AT, 16);
    w.byte(TAG.spanId);
    if (role === Role.server) w.lengthPrefixed(ids, SERVER_ID_AT, 8);
    else if (role === Role.client) w.lengthPrefixed(ids, CLIENT_ID_AT, 8);
    else if (this.stepSpanId === undefined) w.lengthPrefixed(this.stepIds.bytes, this.stepIds.take(8), 8);
    else {
      const hex = Buffer.from(this.stepSpanId(), 'latin1');
      hexInto(ids, STEP_ID_AT, hex, 0, hex.length, 8);
      w.lengthPrefixed(ids, STEP_ID_AT, 8);
    }
    if (this.traceStateEnd > 0) {
      w.byte(TAG.spanTraceState);
      w.copy(this.tape.bytes, this.traceStateStart, this.traceStateEnd);
    }
    if (role !== Role.server) {
      w.byte(TAG.spanParentId);
      w.lengthPrefixed(ids, SERVER_ID_AT, 8);
    } else if (this.remoteParent) {
      w.byte(TAG.spanParentId);
      w.lengthPrefixed(ids, PARENT_ID_AT, 8);
    }
    w.byte(TAG.spanName);
    this.copyString(this.stringNumber(this.tape.varint()));
    w.byte(TAG.spanKind);
    w.byte(role === Role.server ? OTLP_KIND_SERVER : role === Role.client ? OTLP_KIND_CLIENT : OTLP_KIND_INTERNAL);
    w.byte(TAG.spanStart);
    this.time(this.tape.double());
    w.byte(TAG.spanEnd);
    this.time(this.tape.double());
    for (let reference = this.tape.varint(); reference !== END_OF_ATTRIBUTES; reference = this.tape.varint()) this.attribute(this.stringNumber(reference));
    const parentIsRemote = role === Role.server && this.remoteParent;
    if (this.tape.byte() === 0) w.raw(parentIsRemote ? UNSET_TAIL_REMOTE_PARENT : UNSET_TAIL);
    else {
      w.raw(DROPPED_COUNTS);
      w.byte(TAG.spanStatus);
      const status = w.begin();
      const start = this.tape.pos;
      const end = this.tape.skipString();
      // A failure with no message has none (its length byte alone).
      if (end - start > 1) {
        w.byte(TAG.statusMessage);
        w.copy(this.tape.bytes, start, end);
      }
      w.byte(TAG.statusCode);
      w.byte(STATUS_ERROR);
      w.end(status);
      w.raw(parentIsRemote ? FLAGS_REMOTE_PARENT : FLAGS);
    }
    w.end(at);
  }

  /**
   * One span attribute, a `KeyValue` in `Span.attributes`, its key string number `key`: its value
   * read off the tape, or, marked "as before", the key's last value again — copied as the field
   * kept the second time it was met, while it is small enough to keep.
   */
  private attribute(key: number): void {
    const w = this.writer;
    const tape = this.tape;
    const again = tape.bytes[tape.pos] === VALUE.asBefore;
    if (again) {
      tape.pos++;
      const kept = this.keptField[key];
      if (kept !== undefined) return w.raw(kept);
    } else {
      this.valueAt[key] = tape.pos;
      this.keptField[key] = undefined;
    }
    const fieldStart = w.pos;
    w.byte(TAG.spanAttribute);
    const at = w.begin();
    w.byte(TAG.field1);
    this.copyString(key);
    w.byte(TAG.field2);
    const value = w.begin();
    if (!again) this.anyValue();
    else {
      // Read again where it lies (a key first met "as before" had no value: an empty AnyValue); the tape goes on after the mark.
      const valueAt = this.valueAt[key];
      if (valueAt !== undefined) {
        const resume = tape.pos;
        tape.pos = valueAt;
        this.anyValue();
        tape.pos = resume;
      }
    }
    w.end(value);
    w.end(at);
    if (again && w.pos - fieldStart <= MAX_KEPT_FIELD_BYTES) this.keptField[key] = w.copyFrom(fieldStart);
  }

  /** An `AnyValue`'s fields, from the value at the tape's position, as the SDK writes an attribute value (undefined or null: none). */
  private anyValue(): void {
    const w = this.writer;
    const tape = this.tape;
    switch (tape.byte()) {
      case VALUE.string: {
        const start = tape.pos;
        const end = tape.skipString();
        w.byte(TAG.field1);
        w.copy(tape.bytes, start, end);
        return;
      }
      case VALUE.number:
        return writeNumber(w, tape.double());
      case VALUE.true:
      case VALUE.false:
        w.byte(TAG.boolValue);
        w.byte(tape.bytes[tape.pos - 1] === VALUE.true ? 1 : 0);
        return;
      case VALUE.array: {
        w.byte(TAG.arrayValue);
        const at = w.begin();
        const count = tape.varint();
        for (let i = 0; i < count; i++) {
          w.byte(TAG.field1);
          const item = w.begin();
          this.anyValue();
          w.end(item);
        }
        w.end(at);
        return;
      }
      case VALUE.other:
        return;
      default:
        throw new Error('record tape: unknown value');
    }
  }

  /** The number of the string a reference names (noting where it lies first when it is new). */
  private stringNumber(reference: number): number {
    const tape = this.tape;
    if (reference === NEW_STRING) {
      this.stringStarts.push(tape.pos);
      this.stringEnds.push(tape.skipString());
      return this.stringStarts.length - 1;
    }
    const number = reference - FIRST_STRING_REFERENCE;
    if (number >= this.stringStarts.length) throw new Error('record tape: unknown string reference');
    return number;
  }

  /** A string the tape named, length first, copied as its bytes are. */
  private copyString(number: number): void {
    this.writer.copy(this.tape.bytes, this.stringStarts[number]!, this.stringEnds[number]!);
  }

  /** An id, hex on the tape, as bytes in `ids` at `at`; false when it is not `bytes` bytes of hex. */
  private hexId(at: number, bytes: number): boolean {
    const tape = this.tape;
    const start = tape.pos;
    const end = tape.skipString();
    // Its digits follow a one-byte length: a string with a longer length is no id, and fails the check of its length.
    return hexInto(this.ids, at, tape.bytes, start + 1, end, bytes);
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
}
