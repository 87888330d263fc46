import type { AttributeValue } from '@opentelemetry/api';
import { AttributeList, type RemoteParent, type RequestRecord, type SpanFacts, type StepFacts, type TapedRecord } from './export-messages.js';
import { ProtobufWriter } from './protobuf-writer.js';

/**
 * Ended requests' records as a compact tape: written by the request thread, a shipment at a time
 * (export-thread.ts), and read back by the export thread, which writes them as OTLP spans
 * (otlp-spans.ts). The tape is cheaper to write than the spans: no protobuf framing, no ids
 * turned into bytes, no times into nanoseconds, and most of a request's strings are the last
 * request's (attribute keys, span names, and values such as the route, the model, the team),
 * which the tape names by a number or marks as "as before" (docs/tracing.md, "Cost").
 *
 * A shipment's tape stands alone: its strings and each key's last value count from its start
 * (reset()), so a shipment lost with a thread that died takes nothing the next one needs.
 *
 * Layout, in order: a record is its trace id, start (ms), parent (0, or 1 and its span id, trace
 * flags and trace state), the SERVER span (with id), the steps (a count, then each step), the
 * CLIENT span (0, or 1 and the span with id). A span is [id], its name (a string reference), its
 * start and end (µs), its attributes, its error (0, or 1 and the message). Attributes are pairs
 * of a key (a string reference) and a value, ended by a 0. A string reference is 1 and the string
 * (the tape's next string number), or its number + 2.
 */

const END_OF_ATTRIBUTES = 0;
const NEW_STRING = 1;
const FIRST_STRING_REFERENCE = 2;

/** What a value's first byte says it is. */
const VALUE = { other: 0, string: 1, number: 2, true: 3, false: 4, array: 5, asBefore: 6 } as const;

/** The request thread's half: records written to a tape it ships, as bytes, with each request's end. */
export class RecordTapeWriter {
  private readonly writer = new ProtobufWriter(32 * 1024);
  /** The strings this tape has named so far, by number. */
  private readonly strings = new Map<string, number>();
  /** Each key's last value (by the key's string number): a value equal to it is written as "as before". */
  private lastValues: (AttributeValue | undefined)[] = [];

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
  }

  /** Appends a record; on a value it cannot write (never one the gateway makes), the tape is left as it was and false returned. */
  write(record: RequestRecord): boolean {
    const w = this.writer;
    const mark = w.pos;
    const stringsBefore = this.strings.size;
    try {
      w.string(record.traceId);
      w.double(record.start);
      this.parent(record.parent);
      this.span(record.server, record.server.id);
      w.varint(record.steps.length);
      for (const step of record.steps) this.span(step, undefined);
      if (record.client === undefined) w.byte(0);
      else {
        w.byte(1);
        this.span(record.client, record.client.id);
      }
      return true;
    } catch {
      w.pos = mark;
      // The reader never sees the part written: the strings it named are forgotten, and no value is "as before" until written again.
      for (const [value, number] of this.strings) if (number >= stringsBefore) this.strings.delete(value);
      this.lastValues = [];
      return false;
    }
  }

  private parent(parent: RemoteParent | undefined): void {
    const w = this.writer;
    if (parent === undefined) return w.byte(0);
    w.byte(1);
    w.string(parent.spanId);
    w.varint(parent.traceFlags & 0xff);
    if (parent.traceState === undefined) w.byte(0);
    else {
      w.byte(1);
      w.string(parent.traceState);
    }
  }

  private span(facts: StepFacts, id: string | undefined): void {
    const w = this.writer;
    if (id !== undefined) w.string(id);
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
    const number = this.strings.get(value);
    if (number !== undefined) {
      w.varint(number + FIRST_STRING_REFERENCE);
      return number;
    }
    const next = this.strings.size;
    this.strings.set(value, next);
    w.byte(NEW_STRING);
    w.string(value);
    return next;
  }

  private value(value: AttributeValue | undefined, key: number): void {
    const w = this.writer;
    // A key met for the first time has undefined as its last value, as it has on the reader's side.
    if (this.lastValues[key] === value) return w.byte(VALUE.asBefore);
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

/** The export thread's half: a shipment's tape read back, record by record. */
export class RecordTapeReader {
  private pos = 0;
  private readonly strings: string[] = [];
  private readonly lastValues: (AttributeValue | undefined)[] = [];
  private readonly bytes: Buffer;

  constructor(tape: Uint8Array) {
    this.bytes = Buffer.from(tape.buffer, tape.byteOffset, tape.byteLength);
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  /** The next record (throws on a tape that is not one this module wrote). */
  read(): TapedRecord {
    const traceId = this.string();
    const start = this.double();
    const parent = this.parent();
    const server = this.span(true) as SpanFacts<AttributeList>;
    const stepCount = this.varint();
    const steps: StepFacts<AttributeList>[] = [];
    for (let i = 0; i < stepCount; i++) steps.push(this.span(false));
    const client = this.byte() === 1 ? (this.span(true) as SpanFacts<AttributeList>) : undefined;
    return { traceId, start, parent, server, steps, client };
  }

  private parent(): RemoteParent | undefined {
    if (this.byte() === 0) return undefined;
    const spanId = this.string();
    const traceFlags = this.varint();
    const traceState = this.byte() === 1 ? this.string() : undefined;
    return { spanId, traceFlags, traceState };
  }

  private span(withId: boolean): StepFacts<AttributeList> | SpanFacts<AttributeList> {
    const id = withId ? this.string() : undefined;
    const name = this.strings[this.stringNumber(this.varint())]!;
    const start = this.double();
    const end = this.double();
    const pairs: (string | AttributeValue | undefined)[] = [];
    for (let reference = this.varint(); reference !== END_OF_ATTRIBUTES; reference = this.varint()) {
      const number = this.stringNumber(reference);
      pairs.push(this.strings[number]!, this.value(number));
    }
    const attributes = new AttributeList(pairs);
    const error = this.byte() === 1 ? this.string() : undefined;
    // One shape for every span (a step's id undefined): the encoder reads them all alike.
    return { id, name, start, end, attributes, error };
  }

  /** The number of the string a reference names (reading it first when it is new). */
  private stringNumber(reference: number): number {
    if (reference === NEW_STRING) return this.strings.push(this.string()) - 1;
    const number = reference - FIRST_STRING_REFERENCE;
    if (number >= this.strings.length) throw new Error('record tape: unknown string reference');
    return number;
  }

  private value(key: number): AttributeValue | undefined {
    if (this.bytes[this.pos] === VALUE.asBefore) {
      this.pos++;
      return this.lastValues[key];
    }
    const value = this.item() as AttributeValue | undefined;
    this.lastValues[key] = value;
    return value;
  }

  private item(): unknown {
    switch (this.byte()) {
      case VALUE.string:
        return this.string();
      case VALUE.number:
        return this.double();
      case VALUE.true:
        return true;
      case VALUE.false:
        return false;
      case VALUE.array: {
        const count = this.varint();
        const items: unknown[] = [];
        for (let i = 0; i < count; i++) items.push(this.item());
        // Frozen, as the gateway's repeated arrays are: met again "as before", the encoder may keep its field.
        return Object.freeze(items);
      }
      case VALUE.other:
        return undefined;
      default:
        throw new Error('record tape: unknown value');
    }
  }

  private byte(): number {
    if (this.pos >= this.bytes.length) throw new Error('record tape: ended early');
    return this.bytes[this.pos++]!;
  }

  private varint(): number {
    let value = 0;
    let scale = 1;
    for (;;) {
      const byte = this.byte();
      value += (byte & 0x7f) * scale;
      if (byte < 0x80) return value;
      scale *= 0x80;
    }
  }

  private double(): number {
    const value = this.bytes.readDoubleLE(this.pos);
    this.pos += 8;
    return value;
  }

  private string(): string {
    const length = this.varint();
    const end = this.pos + length;
    if (end > this.bytes.length) throw new Error('record tape: ended early');
    const value = this.bytes.toString('utf8', this.pos, end);
    this.pos = end;
    return value;
  }
}
