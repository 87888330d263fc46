import { millisToHrTime } from '@opentelemetry/core';
import { ProtobufTraceSerializer } from '@opentelemetry/otlp-transformer';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { RandomIdGenerator, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import type { RequestRecord } from '../../src/tracing/export-messages.js';
import { exportEnvelope, exportRequest } from '../../src/tracing/otlp-export.js';
import { OtlpSpanEncoder } from '../../src/tracing/otlp-spans.js';
import { ProtobufWriter } from '../../src/tracing/protobuf-writer.js';
import { RecordTapeWriter } from '../../src/tracing/record-tape.js';
import { median } from '../load-runs/load.js';
import { readableSpansOf, type SdkSpanSettings } from './sdk-spans.js';

/**
 * What it costs to turn traced chat requests into the OTLP protobuf a collector receives, the
 * two ways the gateway has done it, in one process, one after the other, on the same records:
 *   sdk     — the record as JSON to the export thread, parsed there, made into the SDK's
 *             ReadableSpans, serialized by the SDK's ProtobufTraceSerializer (512 spans an export);
 *   tape    — the record written to a tape (src/tracing/record-tape.ts: the request thread's
 *             part), then the tape written as protobuf (src/tracing/otlp-spans.ts: the export
 *             thread's part), each part timed on its own, and each ship one export.
 * (Between the two, the record was written as protobuf on the request thread: 4.7 µs a request
 * here, where the tape's halves were 1.8 and 6.1 with the tape read back into records first.)
 * Both produce the same bytes (test/unit/tracing/otlp-spans.test.ts, record-tape.test.ts). CPU
 * time of this thread only; what it means for requests/s is `npm run bench:tracing`'s.
 *
 *   tsc -p tsconfig.bench.json && node dist/bench/comparisons/span-encoding.js
 */

const REQUESTS_PER_SHIP = 64;
const SHIPS = 100;
const ROUNDS = 7;
const ids = new RandomIdGenerator();

/** A chat request as the bench's gateway traces one: 5 spans, 26 attributes. */
function chatRecord(): RequestRecord {
  const tollgate = { 'tollgate.team': 'research', 'tollgate.project': 'bench', 'tollgate.key_id': 'k_bench', 'tollgate.cost': 0.000123 };
  return {
    traceId: ids.generateTraceId(),
    start: performance.now(),
    server: {
      id: ids.generateSpanId(),
      name: 'POST /v1/chat/completions',
      start: 0,
      end: 1800,
      attributes: { 'http.request.method': 'POST', 'http.route': '/v1/chat/completions', 'url.path': '/v1/chat/completions', 'url.scheme': 'http', 'user_agent.original': 'bench', ...tollgate, 'http.response.status_code': 200 },
    },
    steps: [
      { name: 'auth', start: 10, end: 60, attributes: {} },
      { name: 'validate', start: 61, end: 120, attributes: {} },
      { name: 'limits', start: 121, end: 400, attributes: { 'tollgate.limits.decision': 'admitted', 'tollgate.limits.scopes': ['key', 'team'], 'tollgate.limits.checks': ['key:rpm', 'team:tpm'] } },
    ],
    client: {
      id: ids.generateSpanId(),
      name: 'chat OpenPipe/Qwen3-14B-Instruct',
      start: 410,
      end: 1750,
      attributes: {
        'http.request.method': 'POST',
        'tollgate.upstream': 'inference',
        'gen_ai.operation.name': 'chat',
        'gen_ai.provider.name': 'inference',
        'gen_ai.request.model': 'OpenPipe/Qwen3-14B-Instruct',
        'gen_ai.request.max_tokens': 64,
        'http.response.status_code': 200,
        ...tollgate,
        'gen_ai.response.model': 'OpenPipe/Qwen3-14B-Instruct',
        'gen_ai.usage.input_tokens': 12,
        'gen_ai.usage.output_tokens': 20,
        'gen_ai.response.id': 'chatcmpl-abc123',
        'gen_ai.response.finish_reasons': ['stop'],
      },
    },
  };
}

const sdkSpanSettings: SdkSpanSettings = {
  origin: millisToHrTime(performance.timeOrigin),
  resource: resourceFromAttributes({ 'service.name': 'tollgate' }),
  instrumentationScope: { name: 'tollgate' },
  stepSpanId: () => ids.generateSpanId(),
};

/** The former path: JSON across, ReadableSpans, the SDK's serializer per 512 spans. Returns bytes written. */
function viaSdk(ships: readonly RequestRecord[][]): number {
  let bytes = 0;
  let queued: ReadableSpan[] = [];
  for (const ship of ships) {
    const records = JSON.parse(JSON.stringify(ship)) as RequestRecord[];
    for (const record of records) readableSpansOf(record, sdkSpanSettings, queued);
    while (queued.length >= 512) {
      bytes += ProtobufTraceSerializer.serializeRequest(queued.slice(0, 512))!.length;
      queued = queued.slice(512);
    }
  }
  return bytes;
}

/** The tape: each ship written to a tape (timed as `written`), then written as OTLP from it (timed as `encoded`). Returns bytes a request. */
function viaTape(ships: readonly RequestRecord[][], written: number[], encoded: number[]): number {
  const tape = new RecordTapeWriter();
  const writer = new ProtobufWriter();
  const encoder = new OtlpSpanEncoder(writer, performance.timeOrigin);
  const envelope = exportEnvelope('tollgate', 'tollgate');
  let writing = 0;
  let encoding = 0;
  let exported = 0;
  for (const ship of ships) {
    const started = process.cpuUsage();
    for (const record of ship) tape.write(record);
    const bytes = new Uint8Array(tape.bytes());
    tape.reset();
    const wrote = process.cpuUsage(started);
    encoder.startTape(bytes);
    for (let i = 0; i < ship.length; i++) encoder.write();
    exported += exportRequest(envelope, writer.view(0, writer.pos)).length;
    writer.reset();
    const all = process.cpuUsage(started);
    writing += wrote.user + wrote.system;
    encoding += all.user + all.system - wrote.user - wrote.system;
  }
  written.push(writing / (SHIPS * REQUESTS_PER_SHIP));
  encoded.push(encoding / (SHIPS * REQUESTS_PER_SHIP));
  return exported / (SHIPS * REQUESTS_PER_SHIP);
}

function microsPerRequest(run: () => number): { micros: number; bytes: number } {
  const started = process.cpuUsage();
  const bytes = run();
  const used = process.cpuUsage(started);
  return { micros: (used.user + used.system) / (SHIPS * REQUESTS_PER_SHIP), bytes };
}

const ships = Array.from({ length: SHIPS }, () => Array.from({ length: REQUESTS_PER_SHIP }, chatRecord));
// Warm both up (optimised code), then alternate, keeping each one's rounds.
for (let i = 0; i < 3; i++) viaSdk(ships), viaTape(ships, [], []);
const sdk: number[] = [];
const tapeWritten: number[] = [];
const tapeEncoded: number[] = [];
let bytesPerRequest = 0;
for (let round = 0; round < ROUNDS; round++) {
  sdk.push(microsPerRequest(() => viaSdk(ships)).micros);
  bytesPerRequest = viaTape(ships, tapeWritten, tapeEncoded);
}
const row = (name: string, values: number[]): string => `| ${name} | ${median(values).toFixed(1)} | ${values.map((v) => v.toFixed(1)).join(' / ')} |`;
process.stdout.write(
  [
    `Traced chat requests to OTLP protobuf (5 spans, ${bytesPerRequest.toFixed(0)} bytes a request), CPU µs a request, ${ROUNDS} rounds of ${SHIPS * REQUESTS_PER_SHIP} requests:`,
    '',
    '| path | median | rounds |',
    '|---|--:|---|',
    row('sdk: JSON across, ReadableSpan, ProtobufTraceSerializer', sdk),
    row('tape: written (request thread)', tapeWritten),
    row('tape: written as OTLP (export thread)', tapeEncoded),
    '',
    `tape, both halves ÷ sdk: ${((median(tapeWritten) + median(tapeEncoded)) / median(sdk)).toFixed(2)}×`,
    '',
  ].join('\n'),
);
