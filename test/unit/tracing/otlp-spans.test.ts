import type { Attributes } from '@opentelemetry/api';
import { describe, expect, it } from 'vitest';
import type { RequestRecord } from '../../../src/tracing/export-messages.js';
import { exportEnvelope, exportRequest } from '../../../src/tracing/otlp-export.js';
import { OtlpSpanEncoder } from '../../../src/tracing/otlp-spans.js';
import { ProtobufWriter } from '../../../src/tracing/protobuf-writer.js';
import { RecordTapeWriter } from '../../../src/tracing/record-tape.js';
import { decodeTraceRequest, SPAN_KIND } from '../../fixtures/otlp-receiver.js';
import { counterIds, encodedBytes, SERVICE, sdkBytes, TIME_ORIGIN } from '../../fixtures/tape-spans.js';

/**
 * The export's bytes, written by the export thread straight from the tape of records the request
 * thread wrote (src/tracing/record-tape.ts, src/tracing/otlp-spans.ts), held against what the
 * SDK's own ProtobufTraceSerializer writes for the same spans handed to it as ReadableSpans, the
 * way the gateway handed them to the SDK before: byte for byte, so a collector sees exactly what
 * the SDK would have sent. The steps' span ids come from a counter on both sides.
 */

const chatRecord = (overrides: Partial<RequestRecord> = {}): RequestRecord => ({
  traceId: '0af7651916cd43dd8448eb211c80319c',
  start: 1234.25,
  server: {
    id: 'b7ad6b7169203331',
    name: 'POST /v1/chat/completions',
    start: 0,
    end: 18_250,
    attributes: {
      'http.request.method': 'POST',
      'url.path': '/v1/chat/completions',
      'http.route': '/v1/chat/completions',
      'http.response.status_code': 200,
      'tollgate.team': 'research',
      'tollgate.cost': 0.000123,
    },
  },
  steps: [
    { name: 'auth', start: 12, end: 340, attributes: {} },
    { name: 'validate', start: 341, end: 402, attributes: {} },
    { name: 'limits', start: 403, end: 1_999, attributes: { 'tollgate.limits.decision': 'admitted', 'tollgate.limits.scopes': ['key', 'team'], 'tollgate.limits.checks': ['key:rpm', 'team:tpm'] } },
  ],
  client: {
    id: '00f067aa0ba902b7',
    name: 'chat OpenPipe/Qwen3-14B-Instruct',
    start: 2_000,
    end: 18_000,
    attributes: {
      'gen_ai.operation.name': 'chat',
      'gen_ai.request.model': 'OpenPipe/Qwen3-14B-Instruct',
      'gen_ai.request.max_tokens': 64,
      'gen_ai.request.temperature': 0.7,
      'gen_ai.request.stream': false,
      'gen_ai.usage.input_tokens': 12,
      'gen_ai.response.finish_reasons': ['stop'],
    },
  },
  ...overrides,
});

describe('OTLP spans written from the records on a tape', () => {
  it('writes a chat request (steps, CLIENT, SERVER) as the SDK serializer does, byte for byte', () => {
    const records = [chatRecord()];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
  });

  it('decodes as the spans of the record: names, kinds, parents, ids, times on the wall clock', () => {
    const decoded = decodeTraceRequest(encodedBytes([chatRecord()]));
    expect(decoded.map((span) => [span.name, span.kind, span.parentSpanId])).toEqual([
      ['auth', SPAN_KIND.internal, 'b7ad6b7169203331'],
      ['validate', SPAN_KIND.internal, 'b7ad6b7169203331'],
      ['limits', SPAN_KIND.internal, 'b7ad6b7169203331'],
      ['chat OpenPipe/Qwen3-14B-Instruct', SPAN_KIND.client, 'b7ad6b7169203331'],
      ['POST /v1/chat/completions', SPAN_KIND.server, ''],
    ]);
    expect(decoded.map((span) => span.spanId)).toEqual(['0000000000000001', '0000000000000002', '0000000000000003', '00f067aa0ba902b7', 'b7ad6b7169203331']);
    // The request started 1234.25 ms after the time origin; the SERVER span ends 18,250 µs later.
    const serverSpan = decoded[4]!;
    expect(serverSpan.startTime).toBe(1_764_000_001_357_750_000n);
    expect(serverSpan.endTime).toBe(1_764_000_001_376_000_000n);
    expect(serverSpan.attributes).toEqual(chatRecord().server.attributes);
    expect(decoded[3]!.attributes).toEqual(chatRecord().client!.attributes);
    expect(serverSpan.resource['service.name']).toBe(SERVICE);
  });

  it('continues a remote parent with its tracestate, and marks failures with their message (or none)', () => {
    const records = [
      chatRecord({
        parent: { spanId: 'a3ce929d0e0e4736', traceState: 'vendor=one,other=two' },
        server: { ...chatRecord().server, error: '' },
        client: { ...chatRecord().client!, error: 'upstream timed out after 30000 ms' },
      }),
      chatRecord({ traceId: '4bf92f3577b34da6a3ce929d0e0e4736', client: undefined, steps: [] }),
      // A caller with an empty trace state: the SDK writes none.
      chatRecord({ parent: { spanId: 'a3ce929d0e0e4737', traceState: '' } }),
    ];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
  });

  it('writes span times as the SDK does across 2^32 ns and whole seconds, for a request an hour long', () => {
    // Starts a few ns before the origin's nanoseconds carry into a second; its spans' times pass
    // many 2^32 ns (4.29 s) boundaries, and the last ends an hour in.
    const hour = 3_600_000_000;
    const records = [
      chatRecord({
        start: 876.5,
        server: { ...chatRecord().server, end: hour },
        steps: [
          { name: 'auth', start: 0, end: 4_294_967, attributes: {} },
          { name: 'validate', start: 4_294_968, end: 999_999_999, attributes: {} },
        ],
        client: { ...chatRecord().client!, start: 1_000_000_000, end: hour - 1 },
      }),
      chatRecord({ start: 10_000_000.125, steps: [{ name: 'auth', start: 1, end: 8_589_934, attributes: {} }] }),
    ];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
    const server = decodeTraceRequest(encodedBytes(records)).find((span) => span.name === 'POST /v1/chat/completions')!;
    expect(server.endTime - server.startTime).toBe(3_600_000_000_000n);
  });

  it.each<[string, Attributes]>([
    ['non-ASCII and lone surrogates', { 'gen_ai.request.model': 'modèle-ü-😀', 'tollgate.refusal.reason': 'bad \ud800 half' }],
    ['a value whose length takes two bytes, and a span over 16 KiB (three)', { 'gen_ai.input.messages': 'x'.repeat(200), 'gen_ai.output.messages': 'y'.repeat(20_000) }],
    ['integers at the edges of int64 and doubles', { a: 0, b: -1, c: 2 ** 31, d: -(2 ** 53), e: 2 ** 63, f: 9_007_199_254_740_993, g: 1.5, h: -0.25, i: Number.MAX_VALUE }],
    ['booleans and arrays of every kind', { t: true, f: false, s: ['a', 'é'], n: [1, 2.5, -3], b: [true, false], empty: [] }],
    ['a key longer than 127 bytes', { ['k'.repeat(130)]: 'v' }],
  ])('writes attributes as the SDK does: %s', (_, attributes) => {
    const records = [chatRecord({ steps: [{ name: 'limits', start: 1, end: 2, attributes }] })];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
  });

  it('writes a value that went through JSON as null (a NaN) as the SDK writes null: an empty AnyValue', () => {
    const attributes = JSON.parse('{"gen_ai.request.temperature": null}') as Attributes;
    const records = [chatRecord({ steps: [{ name: 'validate', start: 1, end: 2, attributes }] })];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
  });

  it('writes a value it has kept (met twice in a row) and values that change after it, as the SDK does', () => {
    // The encoder copies a whole attribute field it has met twice in a row under the same key:
    // a run of equal values, then changes (to another scalar, an equal-looking number, an
    // array, undefined, a long string), then the first value again.
    const server = chatRecord().server;
    const withServer = (attributes: Attributes): RequestRecord => chatRecord({ server: { ...server, attributes: { ...server.attributes, ...attributes } } });
    const records = [
      withServer({}),
      withServer({}),
      withServer({}),
      withServer({ 'tollgate.team': 'platform', 'http.response.status_code': 429 }),
      withServer({ 'tollgate.team': 'platform', 'http.response.status_code': 429.5 }),
      withServer({ 'tollgate.team': ['research'], 'http.response.status_code': '200' }),
      withServer({ 'tollgate.team': undefined, 'http.response.status_code': true }),
      withServer({ 'tollgate.team': 'r'.repeat(300) }),
      withServer({ 'tollgate.team': 'r'.repeat(300) }),
      withServer({ 'tollgate.team': 'r'.repeat(300) }),
      withServer({}),
      withServer({}),
    ];
    expect(Buffer.from(encodedBytes(records)).equals(Buffer.from(sdkBytes(records)))).toBe(true);
    const teams = decodeTraceRequest(encodedBytes(records))
      .filter((span) => span.kind === SPAN_KIND.server)
      .map((span) => span.attributes['tollgate.team']);
    // undefined is written as an empty AnyValue, which the receiver reads as [].
    expect(teams).toEqual(['research', 'research', 'research', 'platform', 'platform', ['research'], [], 'r'.repeat(300), 'r'.repeat(300), 'r'.repeat(300), 'research', 'research']);
  });

  it('writes a frozen array met again as it was, and an array that changed in place as it is now', () => {
    // The tape marks a value met again "as before" only when it cannot have changed since: a scalar, or a frozen array.
    const tape = new RecordTapeWriter();
    const limits = (checks: readonly string[]): RequestRecord => chatRecord({ steps: [{ name: 'limits', start: 1, end: 2, attributes: { 'tollgate.limits.checks': checks as string[] } }] });
    const frozen = Object.freeze(['key:rpm', 'team:tpm']);
    const changing = ['key:rpm'];
    const write = (record: RequestRecord): void => expect(tape.write(record)).toBe(true);
    write(limits(frozen));
    write(limits(frozen));
    write(limits(frozen));
    write(limits(changing));
    changing.push('team:rpm');
    write(limits(changing));
    changing[0] = 'project:cost';
    write(limits(changing));
    const writer = new ProtobufWriter(64);
    const encoder = new OtlpSpanEncoder(writer, TIME_ORIGIN, counterIds());
    encoder.startTape(new Uint8Array(tape.bytes()));
    for (let i = 0; i < 6; i++) expect(encoder.write()).toBe(true);
    const bytes = exportRequest(exportEnvelope(SERVICE, 'tollgate'), writer.view(0, writer.pos));
    expect(decodeTraceRequest(bytes).filter((span) => span.name === 'limits').map((span) => span.attributes['tollgate.limits.checks'])).toEqual([
      ['key:rpm', 'team:tpm'],
      ['key:rpm', 'team:tpm'],
      ['key:rpm', 'team:tpm'],
      ['key:rpm'],
      ['key:rpm', 'team:rpm'],
      ['project:cost', 'team:rpm'],
    ]);
  });

  it('writes nothing for a record whose ids are not hex of their length, says so, and writes the records after it', () => {
    const tape = new RecordTapeWriter();
    for (const record of [
      chatRecord(),
      chatRecord({ traceId: 'not-a-trace-id-not-a-trace-id-00' }),
      chatRecord({ client: { ...chatRecord().client!, id: '00f067aa0ba902' } }),
      chatRecord({ parent: { spanId: 'zz f067aa0ba902b' } }),
      chatRecord({ server: { ...chatRecord().server, id: 'b7ad6b716920333' } }),
      chatRecord(),
    ]) {
      expect(tape.write(record)).toBe(true);
    }
    const writer = new ProtobufWriter(64);
    const encoder = new OtlpSpanEncoder(writer, TIME_ORIGIN, counterIds());
    encoder.startTape(new Uint8Array(tape.bytes()));
    expect(encoder.write()).toBe(true);
    const written = writer.pos;
    for (let i = 0; i < 4; i++) {
      expect(encoder.write()).toBe(false);
      expect(writer.pos).toBe(written);
    }
    expect(encoder.done).toBe(false);
    expect(encoder.write()).toBe(true);
    expect(encoder.done).toBe(true);
    const spans = decodeTraceRequest(exportRequest(exportEnvelope(SERVICE, 'tollgate'), writer.view(0, writer.pos)));
    expect(spans.filter((span) => span.kind === SPAN_KIND.server).map((span) => span.traceId)).toEqual(['0af7651916cd43dd8448eb211c80319c', '0af7651916cd43dd8448eb211c80319c']);
  });

  it('writes a shipment: a record it cannot write is lost and counted, the tape after a point it cannot read is lost whole', () => {
    const records = [chatRecord(), chatRecord({ traceId: 'not-a-trace-id-not-a-trace-id-00' }), chatRecord({ client: undefined, steps: [] }), chatRecord(), chatRecord()];
    const tape = new RecordTapeWriter();
    const ends: number[] = [];
    for (const record of records) {
      expect(tape.write(record)).toBe(true);
      ends.push(tape.pos);
    }
    const spans = [5, 5, 1, 5, 5];
    const encoder = new OtlpSpanEncoder(new ProtobufWriter(64), TIME_ORIGIN, counterIds());
    // Cut inside the fourth record: the first and third are written, the second is refused, the fourth and fifth cannot be read.
    const cut = new Uint8Array(tape.bytes()).slice(0, ends[3]! - 5);
    const { requests, lost } = encoder.writeShipment({ tape: cut, spans });
    expect(lost).toBe(5 + 5 + 5);
    expect(requests.spans).toEqual([5, 1]);
    expect(requests.ends).toEqual([requests.ends[0], requests.bytes.length]);
    const written = decodeTraceRequest(exportRequest(exportEnvelope(SERVICE, 'tollgate'), requests.bytes));
    expect(written.map((span) => span.name)).toEqual(['auth', 'validate', 'limits', 'chat OpenPipe/Qwen3-14B-Instruct', 'POST /v1/chat/completions', 'POST /v1/chat/completions']);
    // The whole tape: all but the refused record, each one's spans between its end and the one before.
    const whole = encoder.writeShipment({ tape: new Uint8Array(tape.bytes()), spans });
    expect(whole.lost).toBe(5);
    expect(whole.requests.spans).toEqual([5, 1, 5, 5]);
    expect(whole.requests.ends.at(-1)).toBe(whole.requests.bytes.length);
    // A tape that cannot be read from its first record: nothing written, every span lost.
    const unreadable = encoder.writeShipment({ tape: cut.slice(0, 40), spans });
    expect(unreadable).toEqual({ requests: { bytes: new Uint8Array(0), ends: [], spans: [] }, lost: 21 });
    expect(decodeTraceRequest(exportRequest(exportEnvelope(SERVICE, 'tollgate'), whole.requests.bytes.subarray(whole.requests.ends[1]!, whole.requests.ends[2]!))).map((span) => span.traceId)).toEqual(Array(5).fill('0af7651916cd43dd8448eb211c80319c'));
  });

  it('makes random step ids, never all zero, when no id source is given', () => {
    const writer = new ProtobufWriter(64);
    const encoder = new OtlpSpanEncoder(writer, TIME_ORIGIN);
    const tape = new RecordTapeWriter();
    tape.write(chatRecord());
    encoder.startTape(new Uint8Array(tape.bytes()));
    expect(encoder.write()).toBe(true);
    const ids = decodeTraceRequest(exportRequest(exportEnvelope(SERVICE, 'tollgate'), writer.view(0, writer.pos))).map((span) => span.spanId);
    expect(ids.slice(0, 3).every((id) => /^[0-9a-f]{16}$/.test(id) && id !== '0000000000000000')).toBe(true);
    expect(new Set(ids).size).toBe(5);
  });
});
