import type { ProtobufWriter } from './protobuf-writer.js';

/**
 * The OTLP protobuf pieces the spans (otlp-spans.ts) and the export around them (otlp-export.ts)
 * share: the field tags, and the parts of an attribute (`KeyValue`) as the SDK's serializer writes them.
 */

/** Tags (field number << 3 | wire type) of the OTLP messages the gateway writes. */
export const TAG = {
  /** ExportTraceServiceRequest.resource_spans, ResourceSpans.resource, ScopeSpans.scope, KeyValue.key, AnyValue.string_value, ArrayValue.values, Resource.attributes, InstrumentationScope.name */
  field1: 0x0a,
  /** ResourceSpans.scope_spans, ScopeSpans.spans, KeyValue.value */
  field2: 0x12,
  resourceDroppedAttributes: 0x10,
  spanTraceId: 0x0a,
  spanId: 0x12,
  spanTraceState: 0x1a,
  spanParentId: 0x22,
  spanName: 0x2a,
  spanKind: 0x30,
  spanStart: 0x39,
  spanEnd: 0x41,
  spanAttribute: 0x4a,
  spanDroppedAttributes: 0x50,
  spanDroppedEvents: 0x60,
  spanDroppedLinks: 0x70,
  spanStatus: 0x7a,
  statusMessage: 0x12,
  statusCode: 0x18,
  boolValue: 0x10,
  intValue: 0x18,
  doubleValue: 0x21,
  arrayValue: 0x2a,
} as const;

const INT64_MIN = -(2 ** 63);
const INT64_END = 2 ** 63;

/** `KeyValue.key`. */
export function writeKey(w: ProtobufWriter, key: string): void {
  w.byte(TAG.field1);
  w.string(key);
}

/** `KeyValue.value`: an AnyValue of a string (the resource's `service.name`; span attributes are written from the tape, otlp-spans.ts). */
export function writeStringValue(w: ProtobufWriter, value: string): void {
  w.byte(TAG.field2);
  const at = w.begin();
  w.byte(TAG.field1);
  w.string(value);
  w.end(at);
}

/** A number's `AnyValue` field, as the SDK writes it: an integer in int64's range as int_value, any other as double_value. */
export function writeNumber(w: ProtobufWriter, value: number): void {
  if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
    w.byte(TAG.intValue);
    w.int64(value);
  } else {
    w.byte(TAG.doubleValue);
    w.double(value);
  }
}
