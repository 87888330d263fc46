import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../../src/tracing/export-messages.js';
import { OtlpSpanEncoder } from '../../../src/tracing/otlp-spans.js';
import { ProtobufWriter } from '../../../src/tracing/protobuf-writer.js';
import { RecordTapeWriter } from '../../../src/tracing/record-tape.js';
import { decodeTraceRequest, SPAN_KIND } from '../../fixtures/otlp-receiver.js';
import { encodedTape, sdkBytes, TIME_ORIGIN } from '../../fixtures/tape-spans.js';

/**
 * The record tape (src/tracing/record-tape.ts): records written by the request thread as
 * requests end, written as OTLP spans straight from it by the export thread
 * (src/tracing/otlp-spans.ts). What arrives is what the SDK would have written for the records;
 * strings and values met before in the same tape are named, not repeated; each tape stands alone;
 * a tape the gateway did not write is refused.
 */

const LIMITS_CHECKS = Object.freeze(['key:rpm', 'team:tpm']) as string[];

const record = (n: number, overrides: Partial<RequestRecord> = {}): RequestRecord => ({
  traceId: `0af7651916cd43dd8448eb211c8031${n.toString(16).padStart(2, '0')}`,
  start: 1234.25 + n,
  server: {
    id: `b7ad6b71692033${n.toString(16).padStart(2, '0')}`,
    name: 'POST /v1/chat/completions',
    start: 0,
    end: 18_250 + n,
    attributes: {
      'http.request.method': 'POST',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.team': 'research',
      'tollgate.cost': 0.000123 * n,
    },
  },
  steps: [
    { name: 'auth', start: 12, end: 340, attributes: {} },
    { name: 'limits', start: 403, end: 1_999, attributes: { 'tollgate.limits.decision': 'admitted', 'tollgate.limits.checks': LIMITS_CHECKS } },
  ],
  client: {
    id: `00f067aa0ba902${n.toString(16).padStart(2, '0')}`,
    name: 'chat OpenPipe/Qwen3-14B-Instruct',
    start: 2_000,
    end: 18_000,
    attributes: {
      'gen_ai.request.model': 'OpenPipe/Qwen3-14B-Instruct',
      'gen_ai.request.temperature': 0.7,
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': 12 + n,
      'gen_ai.response.finish_reasons': ['stop'],
      'gen_ai.output.messages': 'Grüße — 你好 👋',
      'tollgate.aborted': true,
    },
  },
  ...overrides,
});

/** A tape of these records, and each one's end. */
function tapeOf(records: readonly RequestRecord[], writer = new RecordTapeWriter()): { bytes: Uint8Array; ends: number[] } {
  const ends: number[] = [];
  for (const r of records) {
    expect(writer.write(r)).toBe(true);
    ends.push(writer.pos);
  }
  return { bytes: new Uint8Array(writer.bytes()), ends };
}

/** Whether the tape's records are written as the SDK writes the records given. */
const sameAsSdk = (tape: Uint8Array, records: readonly RequestRecord[]): boolean => Buffer.from(encodedTape(tape, records.length)).equals(Buffer.from(sdkBytes(records)));

/** The first record on a tape, through the encoder (for a tape it should refuse). */
function writeFirst(tape: Uint8Array): boolean {
  const encoder = new OtlpSpanEncoder(new ProtobufWriter(64), TIME_ORIGIN);
  encoder.startTape(tape);
  return encoder.write();
}

describe('the record tape', () => {
  const parented = record(3, { parent: { spanId: '00f067aa0ba902b7', traceState: 'vendor=abc,other=x' } });
  const refused = record(4, {
    client: undefined,
    steps: [{ name: 'limits', start: 5, end: 9, attributes: { 'error.type': 'rate_limited', 'tollgate.limits.decision': 'refused' }, error: 'too many requests' }],
    server: { ...record(4).server, error: '' },
  });
  // Values of every length a varint holds in one, two and three bytes.
  const long = record(6, { server: { ...record(6).server, attributes: { ...record(6).server.attributes, 'user_agent.original': 'u'.repeat(300), 'url.path': 'p'.repeat(256), 'gen_ai.input.messages': 'm'.repeat(20_000) } } });
  // A value that becomes undefined, and a key first met with none (its last value is undefined on both sides of the tape).
  const unset = record(7, { server: { ...record(7).server, attributes: { ...record(7).server.attributes, 'tollgate.team': undefined, 'tollgate.first.unset': undefined } } });
  // A tape that ends in a string (the SERVER span, written last, failed with a message).
  const failedUpstream = record(8, { client: { ...record(8).client!, error: 'upstream failed: connection reset' }, server: { ...record(8).server, error: 'bad gateway' } });
  const records = [record(1), record(2), parented, refused, record(5, { parent: { spanId: '00f067aa0ba902b8' } }), long, unset, failedUpstream];

  it('is written as the SDK writes its records: ids, times, names, attributes of every type, errors, the caller span', () => {
    const { bytes } = tapeOf(records);
    expect(sameAsSdk(bytes, records)).toBe(true);
  });

  it('names a string met before in the same tape instead of writing it again', () => {
    const { ends } = tapeOf([record(1), record(2)]);
    const first = ends[0]!;
    const second = ends[1]! - ends[0]!;
    // The second record repeats only its ids, times, and the values that changed (cost, tokens).
    expect(second).toBeLessThan(first / 2);
  });

  it('marks a value equal to its key\'s last one instead of writing it again', () => {
    const withAgent = (n: number): RequestRecord => record(n, { server: { ...record(n).server, attributes: { 'user_agent.original': 'agent/'.repeat(200) } } });
    const { ends } = tapeOf([withAgent(1), withAgent(2)]);
    expect(ends[0]).toBeGreaterThan(1200);
    expect(ends[1]! - ends[0]!).toBeLessThan(400);
  });

  it('marks a frozen array met again as the same array, but writes again one that is not frozen', () => {
    const limits = (n: number, checks: string[]): RequestRecord => record(n, { steps: [{ name: 'limits', start: 1, end: 2, attributes: { 'tollgate.limits.checks': checks } }] });
    const checks = Array.from({ length: 40 }, (_, i) => `team-${i}:rpm`);
    const same = Object.freeze([...checks]) as string[];
    const { ends: frozenEnds, bytes: frozenBytes } = tapeOf([limits(1, same), limits(2, same)]);
    const unfrozen = [...checks];
    const { ends: copiedEnds, bytes: copiedBytes } = tapeOf([limits(1, unfrozen), limits(2, unfrozen)]);
    // The same frozen array again is one byte; the same array, not frozen, is all its ~480 bytes again.
    expect(copiedEnds[1]! - copiedEnds[0]! - (frozenEnds[1]! - frozenEnds[0]!)).toBeGreaterThan(480);
    expect(sameAsSdk(frozenBytes, [limits(1, same), limits(2, same)])).toBe(true);
    expect(sameAsSdk(copiedBytes, [limits(1, unfrozen), limits(2, unfrozen)])).toBe(true);
  });

  it('gives a value that changed and changed back as it was each time', () => {
    const teams = ['a', 'b', 'b', 'a'].map((team, i) => record(i, { server: { ...record(i).server, attributes: { 'tollgate.team': team } } }));
    const { bytes } = tapeOf(teams);
    expect(sameAsSdk(bytes, teams)).toBe(true);
    const spans = decodeTraceRequest(encodedTape(bytes, teams.length)).filter((span) => span.kind === SPAN_KIND.server);
    expect(spans.map((span) => span.attributes['tollgate.team'])).toEqual(['a', 'b', 'b', 'a']);
  });

  it('starts each tape afresh after reset: the second is written alone', () => {
    const writer = new RecordTapeWriter();
    tapeOf([record(1)], writer);
    writer.reset();
    const { bytes } = tapeOf([record(2)], writer);
    expect(sameAsSdk(bytes, [record(2)])).toBe(true);
  });

  it('leaves the tape as it was when a record cannot be written, and the records after it read back', () => {
    const writer = new RecordTapeWriter();
    const attributes = { 'tollgate.team': 'research', 'a.new.key': 'x' };
    Object.defineProperty(attributes, 'unreadable', {
      enumerable: true,
      get: () => {
        throw new Error('unreadable');
      },
    });
    expect(writer.write(record(1))).toBe(true);
    const before = writer.pos;
    expect(writer.write(record(2, { server: { ...record(2).server, attributes } }))).toBe(false);
    expect(writer.pos).toBe(before);
    // Strings first named after the failure (where the failed record named them), then named again by number; a value written before it, met again.
    const after = record(3, { server: { ...record(3).server, name: 'GET /v1/models', attributes: { 'tollgate.team': 'research', 'a.new.key': 'y' } } });
    const again = record(4, { server: { ...record(4).server, name: 'GET /v1/models', attributes: { 'tollgate.team': 'research', 'a.new.key': 'y' } } });
    expect(writer.write(after)).toBe(true);
    expect(writer.write(again)).toBe(true);
    expect(sameAsSdk(new Uint8Array(writer.bytes()), [record(1), after, again])).toBe(true);
  });

  it('refuses a tape it did not write: cut short, naming a string it never gave, or a value of no known kind', () => {
    // Cut inside the string it ends with (the SERVER span's error), or before its last byte (a SERVER span with no error).
    const { bytes } = tapeOf([failedUpstream]);
    expect(() => writeFirst(bytes.subarray(0, bytes.length - 3))).toThrow('record tape: ended early');
    const { bytes: noClient } = tapeOf([record(2, { client: undefined })]);
    expect(() => writeFirst(noClient.subarray(0, noClient.length - 1))).toThrow('record tape: ended early');
    // Cut inside the first record's start time (a double, after its 32-digit trace id and its length).
    expect(() => writeFirst(noClient.subarray(0, 33 + 5))).toThrow('record tape: ended early');
    const { bytes: two, ends } = tapeOf([record(1), record(2)]);
    expect(() => writeFirst(two.subarray(ends[0]!))).toThrow('record tape: unknown string reference');
    // By hand: a record up to its SERVER span's name (no steps, no CLIENT span), given as string number 0 of none.
    const start = (w: ProtobufWriter): ProtobufWriter => {
      w.string(record(1).traceId);
      w.double(1);
      w.byte(0);
      w.string(record(1).server.id);
      w.byte(0);
      w.byte(0);
      return w;
    };
    const unnamed = start(new ProtobufWriter(64));
    unnamed.varint(2);
    expect(() => writeFirst(unnamed.view(0, unnamed.pos))).toThrow('record tape: unknown string reference');
    // A name and a key given, then a value whose first byte is no kind of value.
    const unknownValue = start(new ProtobufWriter(64));
    unknownValue.byte(1);
    unknownValue.string('POST /v1/chat/completions');
    unknownValue.double(0);
    unknownValue.double(1);
    unknownValue.byte(1);
    unknownValue.string('tollgate.team');
    unknownValue.byte(0x7f);
    expect(() => writeFirst(unknownValue.view(0, unknownValue.pos))).toThrow('record tape: unknown value');
  });
});
