import type { AttributeValue } from '@opentelemetry/api';
import type { RemoteParent, RequestRecord, StepFacts } from './export-messages.js';
import { ProtobufWriter } from './protobuf-writer.js';

/**
 * Ended requests' records as a compact tape: written by the request thread, a shipment at a time
 * (export-thread.ts), and read by the export thread, which writes OTLP spans straight from it
 * (otlp-spans.ts). The tape is cheaper to write than the spans: no protobuf framing, no ids
 * turned into bytes, no times into nanoseconds, and most of a request's strings are the last
 * request's (attribute keys, span names, and values such as the route, the model, the team),
 * which the tape names by a number or marks as "as before" (docs/tracing.md, "Cost"). Its strings
 * are written as protobuf writes a string (a varint length, then UTF-8), so the export thread
 * copies their bytes into the spans as they are.
 *
 * A shipment's tape stands alone: its strings and each key's last value count from its start
 * (reset()), so a shipment lost with a thread that died takes nothing the next one needs.
 *
 * Layout, in the order the spans are written (the SDK's: steps, CLIENT, SERVER): a record is its
 * trace id, start (ms), parent (0, or 1, its span id and its trace state: 0, or 1 and the string), the SERVER
 * span's id, the steps (a count, then each step), the CLIENT span (0, or 1, its id and the span),
 * the SERVER span. A span is its name (a string reference), its start and end (µs), its
 * attributes, its error (0, or 1 and the message). Attributes are pairs of a key (a string
 * reference) and a value, ended by a 0. A string reference is 1 and the string (the tape's next
 * string number), or its number + 2.
 */

export const END_OF_ATTRIBUTES = 0;
export const NEW_STRING = 1;
export const FIRST_STRING_REFERENCE = 2;

/** What a value's first byte says it is. */
export const VALUE = { other: 0, string: 1, number: 2, true: 3, false: 4, array: 5, asBefore: 6 } as const;

/**
 * A value the tape may mark "as before" when it is met again as the same value: a scalar, or a
 * frozen array (the limits span's, given again while a request passes the same limits). An
 * array that is not frozen may have changed in place since, and is written again.
 */
const unchanging = (value: AttributeValue | undefined): boolean => typeof value !== 'object' || Object.isFrozen(value);

/** The request thread's half: records written to a tape it ships, as bytes, with each request's end. */
export class RecordTapeWriter {
  private readonly writer = new ProtobufWriter(32 * 1024);
  /** The strings this tape has named so far, by number. */
  private readonly strings = new Map<string, number>();
  /** Each key's last value (by the key's string number): a value equal to it is written as "as before". */
  private lastValues: (AttributeValue | undefined)[] = [];
  /**
   * The strings the last record referenced, in order, and their numbers. A record mostly
   * references the same strings in the same order as the one before (attribute keys, step
   * names), so its n-th reference is compared with the last record's n-th first: one comparison
   * instead of asking the map, the larger part of writing a record (~25 references).
   */
  private lastReferences: string[] = [];
  private lastNumbers: number[] = [];
  /** Which reference of the record this is (from 0). */
  private referenceAt = 0;

  get pos(): number {
    return this.writer.pos;
  }

  /** The tape so far: a view, valid until the next write. */
  bytes(): Uint8Array {
    return this.writer.view(0, this.writer.pos);
  }

  /** Starts a new tape (the last one shipped). */
  reset(): void {
    this.writer.reset();
    this.strings.clear();
    this.lastValues = [];
    this.forgetReferences();
  }

  /** The string numbers of the last record no longer hold (a new tape, or a record taken back). */
  private forgetReferences(): void {
    this.lastReferences = [];
    this.lastNumbers = [];
  }

  /** Appends a record; on a value it cannot write (never one the gateway makes), the tape is left as it was and false returned. */
  write(record: RequestRecord): boolean {
    const w = this.writer;
    const mark = w.pos;
    const stringsBefore = this.strings.size;
    this.referenceAt = 0;
    try {
      w.string(record.traceId);
      w.double(record.start);
      this.parent(record.parent);
      w.string(record.server.id);
      w.varint(record.steps.length);
      for (const step of record.steps) this.span(step);
      if (record.client === undefined) w.byte(0);
      else {
        w.byte(1);
        w.string(record.client.id);
        this.span(record.client);
      }
      this.span(record.server);
      return true;
    } catch {
      w.pos = mark;
      // The reader never sees the part written: the strings it named are forgotten, and no value is "as before" until written again.
      for (const [value, number] of this.strings) if (number >= stringsBefore) this.strings.delete(value);
      this.lastValues = [];
      this.forgetReferences();
      return false;
    }
  }

  private parent(parent: RemoteParent | undefined): void {
    const w = this.writer;
    if (parent === undefined) return w.byte(0);
    w.byte(1);
    w.string(parent.spanId);
    if (parent.traceState === undefined) w.byte(0);
    else {
      w.byte(1);
      w.string(parent.traceState);
    }
  }

  private span(facts: StepFacts): void {
    const w = this.writer;
    this.reference(facts.name);
    w.double(facts.start);
    w.double(facts.end);
    const { attributes } = facts;
    for (const key in attributes) {
      const number = this.reference(key);
      this.value(attributes[key], number);
    }
    w.varint(END_OF_ATTRIBUTES);
    if (facts.error === undefined) w.byte(0);
    else {
      w.byte(1);
      w.string(facts.error);
    }
  }

  /** A string by reference: its number when the tape has named it, else the string itself (numbered from now on). */
  private reference(value: string): number {
    const w = this.writer;
    const at = this.referenceAt++;
    if (this.lastReferences[at] === value) {
      const number = this.lastNumbers[at]!;
      w.varint(number + FIRST_STRING_REFERENCE);
      return number;
    }
    let number = this.strings.get(value);
    if (number !== undefined) w.varint(number + FIRST_STRING_REFERENCE);
    else {
      number = this.strings.size;
      this.strings.set(value, number);
      w.byte(NEW_STRING);
      w.string(value);
    }
    this.lastReferences[at] = value;
    this.lastNumbers[at] = number;
    return number;
  }

  private value(value: AttributeValue | undefined, key: number): void {
    const w = this.writer;
    // A key met for the first time has undefined as its last value, as it has on the reader's side.
    if (this.lastValues[key] === value && unchanging(value)) return w.byte(VALUE.asBefore);
    this.lastValues[key] = value;
    this.item(value);
  }

  private item(value: unknown): void {
    const w = this.writer;
    if (typeof value === 'string') {
      w.byte(VALUE.string);
      w.string(value);
    } else if (typeof value === 'number') {
      w.byte(VALUE.number);
      w.double(value);
    } else if (typeof value === 'boolean') w.byte(value ? VALUE.true : VALUE.false);
    else if (Array.isArray(value)) {
      w.byte(VALUE.array);
      w.varint(value.length);
      for (const item of value as readonly unknown[]) this.item(item);
    } else w.byte(VALUE.other);
  }
}

/**
 * The export thread's way along a tape: its primitives, read where they lie. A string is given
 * as where its bytes start (its length first) and end, to be copied as they are. Reading past
 * the end throws: a tape is only ever read as this module wrote it.
 */
export class TapeCursor {
  pos = 0;

  constructor(readonly bytes: Buffer) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  byte(): number {
    if (this.pos >= this.bytes.length) throw new Error('record tape: ended early');
    return this.bytes[this.pos++]!;
  }

  varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.byte();
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  double(): number {
    if (this.pos + 8 > this.bytes.length) throw new Error('record tape: ended early');
    const value = this.bytes.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  /** Passes over a string; where its bytes end (they start after its length, at `end - length`). */
  skipString(): number {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.bytes.length) throw new Error('record tape: ended early');
    this.pos = end;
    return end;
  }
}
