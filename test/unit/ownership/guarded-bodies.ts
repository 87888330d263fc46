import fc from 'fast-check';
import { expect } from 'vitest';
import { GatewayError } from '../../../src/errors.js';
import { JobModelIdReader, type OwnerFields, readOwnerFields, type StreamedValue, StreamRefused, TopLevelStream } from '../../../src/ownership/index.js';
import { PyFloat, PyInt, type PyValue } from '../../../src/python-json/index.js';

/**
 * Guarded bodies (job and model creations) for the owner-field readers' property tests: bodies
 * generated with what makes Python read differently from JSON.parse, the whole-body and streamed
 * readers' verdicts on them, and the check that streaming a body, however it is cut, reaches the
 * whole-body reader's verdict.
 */

export const KEYS = ['model_id', 'entity', 'project', 'name'] as const;

// --- Bodies ------------------------------------------------------------------------------

const ownerKey = fc.constantFrom(
  '"model_id"', '"model\\u005fid"', '"\\u006dodel_id"', '"model_id "', '"Model_id"', '"model_id\\u0000"',
  '"entity"', '"entit\\u0079"', '"project"', '"pr\\u006fject"', '"name"', '"n\\u0061me"', '"name\\/"',
);
const otherKey = fc.oneof(fc.constantFrom('"x"', '"trajectory_groups"', '"base_model"', '"__proto__"', '""'), fc.string({ maxLength: 6 }).map((s) => JSON.stringify(s)));
const stringValue = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 10 }).map((s) => JSON.stringify(s)),
  fc.constantFrom('"m-1"', '"acme"', '""', '"\\u0041bc"', '"\\ud83d\\ude00"', '"\\ud800"', '"x\\udc00"', '"a\\/b"', '"\\ud800\\u0041"', '"tab\\there"', '"raw\ttab"', '"bad\\x"'),
);
const scalarValue = fc.oneof(
  stringValue,
  fc.constantFrom('NaN', 'Infinity', '-Infinity', 'null', 'true', 'false', '1', '-0', '1.5e3', '1e400', '-12.50E-2'),
  // Not JSON, not Python either.
  fc.constantFrom('-NaN', 'nan', 'True', '01', '1.', '.5', '-', '+1'),
  fc.constantFrom('9'.repeat(4300), '9'.repeat(4301), `-${'9'.repeat(4300)}`),
);
const nested = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;
const whitespace = fc.oneof(
  { weight: 12, arbitrary: fc.constantFrom('', '', '', ' ', '\n', '\t', '\r\n') },
  // Whitespace to JavaScript, not to JSON or Python.
  { weight: 1, arbitrary: fc.constantFrom('\u00a0', '\f', '\v', '\u2028', '\ufeff') },
);

const { value: jsonValue } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, scalarValue, tie('array'), tie('object'), fc.constantFrom(nested(450), nested(499), nested(1200))),
  array: fc.array(tie('value'), { maxLength: 3 }).map((items) => `[${items.join(',')}]`),
  object: fc.array(fc.tuple(fc.oneof(ownerKey, otherKey), tie('value')), { maxLength: 3 }).map((members) => `{${members.map(([k, v]) => `${k}:${v}`).join(',')}}`),
}));

/** A top-level object with owner and other members, in any order, any whitespace, sometimes malformed. */
const objectText = fc
  .tuple(
    fc.array(fc.tuple(fc.oneof({ weight: 3, arbitrary: ownerKey }, { weight: 2, arbitrary: otherKey }), fc.oneof({ weight: 3, arbitrary: stringValue }, { weight: 2, arbitrary: jsonValue }), whitespace), { maxLength: 6 }),
    whitespace,
    fc.constantFrom('', '', '', ',', ' ,'),
  )
  .map(([members, ws, trailingComma]) => `${ws}{${members.map(([k, v, w]) => `${w}${k}${w}:${w}${v}${w}`).join(',')}${members.length > 0 ? trailingComma : ''}}${ws}`);

const bodyText = fc.oneof({ weight: 8, arbitrary: objectText }, { weight: 1, arbitrary: jsonValue });

type Mutation = (text: string) => Buffer;
const utf32 = (text: string, bigEndian: boolean): Buffer => {
  const out = Buffer.alloc([...text].length * 4);
  [...text].forEach((ch, i) => (bigEndian ? out.writeUInt32BE(ch.codePointAt(0)!, i * 4) : out.writeUInt32LE(ch.codePointAt(0)!, i * 4)));
  return out;
};
const utf16be = (text: string): Buffer => Buffer.from(text, 'utf16le').swap16();
const mutation: fc.Arbitrary<Mutation> = fc.oneof(
  { weight: 10, arbitrary: fc.constant((t: string) => Buffer.from(t)) },
  fc.constantFrom<Mutation>(
    (t) => Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(t)]),
    (t) => Buffer.from(t, 'utf16le'),
    (t) => Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(t, 'utf16le')]),
    (t) => utf16be(t),
    (t) => Buffer.concat([Buffer.from([0xfe, 0xff]), utf16be(t)]),
    (t) => utf32(t, false),
    (t) => utf32(t, true),
    (t) => Buffer.from(t, 'latin1'),
    // A surrogate encoded in UTF-8 bytes: Python decodes it ('surrogatepass'), strict UTF-8 does not.
    (t) => {
      const quote = t.indexOf('"');
      return quote === -1 ? Buffer.from(t) : Buffer.concat([Buffer.from(t.slice(0, quote + 1)), Buffer.from([0xed, 0xa0, 0x80]), Buffer.from(t.slice(quote + 1))]);
    },
  ),
  fc.tuple(fc.constantFrom('x', '{}', ' {}', '\u0000', ']', '\n\n', ' // c'), fc.boolean()).map(([extra, before]): Mutation => (t) => Buffer.from(before ? extra + t : t + extra)),
  fc.nat().map((n): Mutation => (t) => Buffer.from(t).subarray(0, n % (Buffer.byteLength(t) + 1))),
  fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })).map(([at, byte]): Mutation => (t) => {
    const bytes = Buffer.from(t);
    if (bytes.length > 0) bytes[at % bytes.length] = byte;
    return bytes;
  }),
);

export const body = fc.tuple(bodyText, mutation).map(([text, mutate]) => mutate(text));

/** Hand-written: the reproduced attacks and their innocent neighbours. */
export const KNOWN: Buffer[] = [
  '{"model_id":"mine","x":NaN,"model_id":"theirs"}',
  '{"model_id":"mine","x":Infinity}',
  '{"model_id":"mine","model\\u005fid":"theirs"}',
  '{"entity":"acme","project":"p","name":"n","x":-Infinity}',
  '{"entity":"acme","project":"p","name":"mine","name":"theirs"}',
  '{"model_id":"mine"} {"model_id":"theirs"}',
  '{"t":[{"model_id":"nested"}],"model_id":"top"}',
].map((t) => Buffer.from(t));
KNOWN.push(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"name":"theirs"}')]), Buffer.from('{"name":"theirs"}', 'utf16le'));

/** One value as both sides print it: strings and keys as UTF-16 units (lone surrogates kept), floats as their bits. */
export type Canon = unknown;

export const units = (s: string): string => Buffer.from(s, 'utf16le').toString('hex');

export function canon(value: PyValue): Canon {
  if (value === null) return ['null'];
  if (typeof value === 'boolean') return ['bool', value];
  if (typeof value === 'string') return ['str', units(value)];
  if (value instanceof PyInt) return ['int', value.text];
  if (value instanceof PyFloat) {
    if (Number.isNaN(value.value)) return ['nan'];
    const bits = Buffer.alloc(8);
    bits.writeDoubleBE(value.value);
    return ['float', bits.toString('hex')];
  }
  if (Array.isArray(value)) return ['list', value.map(canon)];
  return ['dict', [...value].map(([k, v]) => [units(k), canon(v)])];
}

export type Verdict = { accepted: true; fields: Record<string, Canon> } | { accepted: false; refusal: GatewayError };

export function gatewayReading(raw: Buffer): Verdict {
  let fields: OwnerFields;
  try {
    fields = readOwnerFields(raw, KEYS, { bodyParam: null, notAnObject: 'not one object' });
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { accepted: false, refusal: err };
  }
  return { accepted: true, fields: Object.fromEntries([...fields].map(([k, v]) => [k, canon(v)])) };
}

/** A body cut into pieces as a network might deliver it: every byte alone, or at pseudo-random points. */
export function chunkings(raw: Buffer, seed: number): Buffer[][] {
  const bytewise = [...raw].map((b) => Buffer.from([b]));
  const random: Buffer[] = [];
  let state = seed || 1;
  for (let at = 0; at < raw.length; ) {
    state = (state * 48271) % 2147483647;
    const size = 1 + (state % 7);
    random.push(raw.subarray(at, at + size));
    at += size;
  }
  return [[raw], bytewise, random];
}

/** The streamed reader's verdict on a body delivered in `parts`: the owner fields it reported (strings kept), or refused. */
export function streamedReading(parts: readonly Buffer[]): { accepted: true; fields: Record<string, StreamedValue> } | { accepted: false } {
  const fields: Record<string, StreamedValue> = {};
  const stream = new TopLevelStream(new Set(KEYS), { maxDepth: 500, maxIntDigits: 4300 }, (key, value) => (fields[key] = value));
  try {
    for (const part of parts) stream.write(part);
    stream.end();
  } catch (err) {
    if (err instanceof StreamRefused) return { accepted: false };
    throw err;
  }
  return { accepted: true, fields };
}

/** The job reader fed in `parts`: its model_id, or undefined when refused (400). */
export function streamedModelId(parts: readonly Buffer[]): string | undefined {
  const reader = new JobModelIdReader();
  return tryRead(() => {
    for (const part of parts) reader.write(part);
    return reader.end();
  });
}

/** A job body's model_id as the whole-body reader reads it, or undefined when it refuses. */
export function wholeBodyModelId(raw: Buffer): string | undefined {
  return tryRead(() => {
    const value = raw.length === 0 ? undefined : readOwnerFields(raw, ['model_id'], { bodyParam: 'model_id', notAnObject: 'not one object' }).get('model_id');
    return typeof value === 'string' && value !== '' ? value : undefined;
  });
}

/** Whatever the job and model readers accept must be what Python reads too. */
export function tryRead<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (err) {
    if (err instanceof GatewayError && err.status === 400 && err.code === 'invalid_request') return undefined;
    throw err;
  }
}

/** The streamed readers reach the whole-body reader's verdict and fields on `raw`, however it is cut (`seed` picks the random cuts). */
export function expectStreamedAgrees(raw: Buffer, gw: Verdict, seed: number, where: string): void {
  for (const parts of chunkings(raw, seed)) {
    const streamed = streamedReading(parts);
    expect(streamed.accepted, `${where}, streamed in ${parts.length} parts`).toBe(gw.accepted);
    if (streamed.accepted && gw.accepted) {
      const strings = Object.fromEntries(Object.entries(gw.fields).map(([k, v]) => [k, (v as unknown[])[0] === 'str' ? (v as string[])[1] : undefined]));
      expect(Object.fromEntries(Object.entries(streamed.fields).map(([k, v]) => [k, v === undefined ? undefined : units(v)])), where).toEqual(strings);
    }
    expect(streamedModelId(parts), where).toEqual(wholeBodyModelId(raw));
  }
}
