/**
 * OpenTelemetry tracing (SPEC 18) on the OpenTelemetry SDK: a SERVER span per /v1 request, spans
 * for the gateway's steps, the upstream CLIENT span with the GenAI semantic conventions, W3C
 * propagation both ways, and optionally the GenAI metrics over OTLP. Off by default: then
 * nothing here is built.
 */
export { batchSettings, createTracing, otlpExporter, samplerFor, type TracingEvents } from './provider.js';
export { TRACE_CONTEXT_HEADERS, Tracing } from './tracing.js';
export { RequestTrace, type RequestOutcome, type StepName, type TraceKit, type TracingSettings, type UpstreamCall } from './request-trace.js';
export { readReply, requestAttributes, type ReplyFacts } from './genai.js';
export { scanJsonReply, type ScannedReply } from './reply-scan.js';
