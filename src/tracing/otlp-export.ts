import { TAG, writeKey, writeStringValue } from './otlp-fields.js';
import { ProtobufWriter, varintSize } from './protobuf-writer.js';

/**
 * An OTLP export (`ExportTraceServiceRequest`) around spans already written (otlp-spans.ts): the
 * resource and the instrumentation scope, written once, and each export's lengths.
 */

/** The parts of every export that do not change: the resource (service.name) and the instrumentation scope, as fields. */
export interface ExportEnvelope {
  readonly resource: Buffer;
  readonly scope: Buffer;
}

export function exportEnvelope(serviceName: string, scopeName: string): ExportEnvelope {
  const w = new ProtobufWriter(256);
  w.byte(TAG.field1);
  const resource = w.begin();
  w.byte(TAG.field1);
  const kv = w.begin();
  writeKey(w, 'service.name');
  writeStringValue(w, serviceName);
  w.end(kv);
  w.byte(TAG.resourceDroppedAttributes);
  w.byte(0);
  w.end(resource);
  const resourceBytes = w.copyFrom(0);
  w.reset();
  w.byte(TAG.field1);
  const scope = w.begin();
  w.byte(TAG.field1);
  w.string(scopeName);
  w.end(scope);
  return { resource: resourceBytes, scope: w.copyFrom(0) };
}

/** The ExportTraceServiceRequest of these spans (`ScopeSpans.spans` fields, in one or more runs of bytes): one resource, one scope. */
export function exportRequest(envelope: ExportEnvelope, ...spans: Uint8Array[]): Uint8Array {
  let spanBytes = 0;
  for (const part of spans) spanBytes += part.length;
  const scopeSpans = envelope.scope.length + spanBytes;
  const resourceSpans = envelope.resource.length + 1 + varintSize(scopeSpans) + scopeSpans;
  const w = new ProtobufWriter(1 + varintSize(resourceSpans) + resourceSpans);
  w.byte(TAG.field1);
  w.varint(resourceSpans);
  w.raw(envelope.resource);
  w.byte(TAG.field2);
  w.varint(scopeSpans);
  w.raw(envelope.scope);
  for (const part of spans) w.raw(part);
  return w.view(0, w.pos);
}
