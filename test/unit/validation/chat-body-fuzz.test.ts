import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { forceStreamUsage } from '../../../src/metering/index.js';
import {
  createChatBodyChecker,
  estimateChatTokens,
  MAX_DETAIL_ITEMS,
  MAX_VALIDATION_BODY_BYTES,
  validateChatBody,
  type ChatBody,
  type ChatBodyCheck,
} from '../../../src/validation/index.js';
import { ECHO_BUDGET_BYTES, stringifyWithoutRecursion } from '../../../src/validation/index.js';
import { PyFloat, renderFastApiJson, renderFastApiJsonWithin } from '../../../src/python-json/index.js';
import { renderFastApiJson as renderFastApiJsonBefore } from '../../fixtures/hostile-bodies/unbounded-json-encoder.js';
import { unboundedAnswer } from '../../fixtures/hostile-bodies/unbounded-validation.js';

// Property-based checks of the chat body checker over arbitrary bytes and JSON texts (chat
// shaped or not, Python-only number forms, unicode, deep nesting, corrupted). Runs are bounded
// so the file takes a few seconds; a failure prints the seed and the shrunk counterexample.

const DEFAULT_COMPLETION = 100;
/** FUZZ_SCALE=20 multiplies every run count, for a longer hunt by hand. */
const SCALE = Number(process.env['FUZZ_SCALE'] ?? '1');
const runs = (count: number): number => Math.round(count * SCALE);
const TIMEOUT = 30_000 * SCALE;
const onLoop = createChatBodyChecker({ defaultCompletionTokens: DEFAULT_COMPLETION, forceStreamUsage: true });
const inWorker = createChatBodyChecker({ defaultCompletionTokens: DEFAULT_COMPLETION, forceStreamUsage: true, inlineMaxBytes: 0, workers: 2 });
afterAll(async () => {
  await Promise.all([onLoop.close(), inWorker.close()]);
});

// --- Arbitraries -------------------------------------------------------------------------

const stringToken = fc.string({ unit: 'binary', maxLength: 12 }).map((s) => JSON.stringify(s));
const numberToken = fc.oneof(
  fc.integer().map(String),
  fc.bigInt({ min: -(10n ** 30n), max: 10n ** 30n }).map(String),
  fc.double({ noNaN: true, noDefaultInfinity: true }).map(String),
  fc.constantFrom('1.0', '-0', '-0.0', '1e5', '1E+2', '2.50', '1e400', '0.1e-3', '123456789012345678', 'NaN', 'Infinity', '-Infinity'),
);
const keyToken = fc.oneof(
  stringToken,
  fc.constantFrom('"model"', '"messages"', '"stream"', '"stream_options"', '"include_usage"', '"max_tokens"', '"content"'),
  fc.constantFrom('"1"', '"01"', '"0"', '"_sa"', '"_sample"', '"\\u0031"', '"__proto__"', '""'),
);
const whitespace = fc.constantFrom('', '', ' ', '\n  ', '\t');

const { value: jsonText, object: objectText } = fc.letrec<{ value: string; array: string; object: string }>((tie) => ({
  value: fc.oneof({ depthSize: 'small' }, numberToken, stringToken, fc.constantFrom('true', 'false', 'null'), tie('array'), tie('object')),
  array: fc.tuple(fc.array(tie('value'), { maxLength: 5 }), whitespace).map(([items, ws]) => `[${ws}${items.join(`,${ws}`)}]`),
  object: fc
    .tuple(fc.array(fc.tuple(keyToken, tie('value')), { maxLength: 5 }), whitespace)
    .map(([members, ws]) => `{${ws}${members.map(([key, value]) => `${key}${ws}:${value}`).join(',')}}`),
}));

/** Chat-shaped bodies: model and messages (often right, sometimes wrong), stream settings, extra members, any order. */
const chatText = fc
  .tuple(
    fc.option(fc.oneof({ weight: 4, arbitrary: stringToken }, { weight: 1, arbitrary: jsonText }), { nil: undefined, freq: 8 }),
    fc.option(fc.array(fc.oneof({ weight: 6, arbitrary: objectText }, { weight: 1, arbitrary: jsonText }), { maxLength: 6 }), { nil: undefined, freq: 8 }),
    fc.option(fc.constantFrom('true', 'false', '1'), { nil: undefined }),
    fc.option(fc.oneof(fc.constantFrom('{}', '{"include_usage":true}', '{"include_usage":false,"x":1}', 'null'), jsonText), { nil: undefined }),
    fc.array(fc.tuple(keyToken, jsonText), { maxLength: 3 }),
    fc.nat(),
  )
  .map(([model, messages, stream, options, extra, seed]) => {
    const members = [
      ...(model === undefined ? [] : [`"model":${model}`]),
      ...(messages === undefined ? [] : [`"messages":[${messages.join(',')}]`]),
      ...(stream === undefined ? [] : [`"stream":${stream}`]),
      ...(options === undefined ? [] : [`"stream_options":${options}`]),
      ...extra.map(([key, value]) => `${key}:${value}`),
    ];
    for (let i = members.length - 1; i > 0; i--) {
      const j = (seed + i * 7919) % (i + 1);
      [members[i], members[j]] = [members[j]!, members[i]!];
    }
    return `{${members.join(',')}}`;
  });

/** Nesting deep enough to take the worker path and to defeat recursive code. */
const deepText = fc
  .tuple(fc.integer({ min: 1, max: 20_000 }), fc.constantFrom('[', '{"a":'), fc.boolean(), fc.boolean())
  .map(([depth, open, closed, inChat]) => {
    const close = open === '[' ? ']' : '}';
    const nested = `${open.repeat(depth)}${open === '[' ? '' : '1'}${closed ? close.repeat(depth) : ''}`;
    return inChat ? `{"model":"m","messages":[],"stream":true,"stream_options":{},"x":${nested}}` : nested;
  });

/** A text with one character replaced: invalid JSON near realistic structure. */
const corrupted = fc
  .tuple(fc.oneof(chatText, jsonText), fc.nat(), fc.constantFrom('', ',', ']', '}', '"', 'x', '\u0001', '\\'))
  .map(([text, at, c]) => {
    const i = text.length === 0 ? 0 : at % text.length;
    return text.slice(0, i) + c + text.slice(i + 1);
  });

const contentType = fc.constantFrom(undefined, 'application/json', 'application/json; charset=utf-8', 'application/vnd.a+json', 'text/plain');

/** Request bytes: arbitrary bytes, or one of the texts above in UTF-8 (sometimes UTF-16 with a BOM). */
const encodedText = fc
  .tuple(fc.oneof(chatText, chatText, chatText, jsonText, corrupted, deepText), fc.constantFrom('utf8', 'utf8', 'utf8', 'utf16'))
  .map(([text, encoding]) => (encoding === 'utf8' ? Buffer.from(text) : Buffer.from(`\ufeff${text}`, 'utf16le')));
const requestBody = fc.oneof(
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 200 }).map((bytes) => Buffer.from(bytes)) },
  { weight: 4, arbitrary: encodedText },
);

// --- Properties --------------------------------------------------------------------------

interface Item {
  readonly [key: string]: unknown;
}

/** The well-formedness every 422 must have, and its size bound. */
function expectBoundedFastApiBody(raw: Buffer, result: { body: string; errorCount: number }): void {
  expect(Buffer.byteLength(result.body)).toBeLessThanOrEqual(Math.min(MAX_VALIDATION_BODY_BYTES, raw.length + MAX_VALIDATION_BODY_BYTES));
  const parsed = JSON.parse(result.body) as { detail: Item[] };
  expect(Object.keys(parsed)).toEqual(['detail']);
  expect(parsed.detail.length).toBeGreaterThanOrEqual(1);
  expect(parsed.detail.length).toBeLessThanOrEqual(MAX_DETAIL_ITEMS + 1);
  expect(result.errorCount).toBeGreaterThanOrEqual(parsed.detail.length > MAX_DETAIL_ITEMS ? MAX_DETAIL_ITEMS + 1 : parsed.detail.length);
  for (const item of parsed.detail) {
    expect(Object.keys(item)).toEqual('ctx' in item ? ['type', 'loc', 'msg', 'input', 'ctx'] : ['type', 'loc', 'msg', 'input']);
    expect(typeof item['type']).toBe('string');
    expect(typeof item['msg']).toBe('string');
    const loc = item['loc'] as unknown[];
    expect(loc[0]).toBe('body');
    for (const part of loc) expect(['string', 'number']).toContain(typeof part);
    if ('ctx' in item) expect(item['ctx']).toBeTypeOf('object');
  }
}

/** What a passing body must come with: the very bytes, or forceStreamUsage's, and today's estimate. */
function expectFacts(raw: Buffer, type: string | undefined, result: Extract<ChatBodyCheck, { ok: true }>): void {
  const validation = validateChatBody(raw, type);
  if (!validation.ok) throw new Error('the checker passed a body validateChatBody refuses');
  const { facts } = result;
  expect(facts.model).toBe(validation.body.model);
  expect(facts.estimatedTokens).toBe(estimateChatTokens(validation.body, DEFAULT_COMPLETION));
  expect(facts.stream).toBe(validation.body.stream === true);
  if (facts.usageForced) expect(facts.forwardBytes.equals(forcedBytes(raw, validation.body))).toBe(true);
  else expect(facts.forwardBytes).toBe(raw);
}

/** forceStreamUsage's bytes; for bodies too deep for its JSON.stringify, the same text without recursion (checked below). */
function forcedBytes(raw: Buffer, body: ChatBody): Buffer {
  try {
    return forceStreamUsage(raw, body).bytes;
  } catch (err) {
    if (!(err instanceof RangeError)) throw err;
    const options = body.stream_options as object | null;
    const kept = typeof options === 'object' && options !== null && !Array.isArray(options) ? options : {};
    return Buffer.from(stringifyWithoutRecursion({ ...body, stream_options: { ...kept, include_usage: true } }));
  }
}

describe('ChatBodyChecker under property-based fuzzing', () => {
  it('never throws, forwards the bytes received (or forceStreamUsage\'s), and answers well-formed 422s within bounds', async () => {
    await fc.assert(
      fc.asyncProperty(requestBody, contentType, async (raw, type) => {
        const result = await onLoop.check(raw, type);
        if (result.ok) expectFacts(raw, type, result);
        else expectBoundedFastApiBody(raw, result);
      }),
      { numRuns: runs(600) },
    );
  }, TIMEOUT);

  it('answers byte for byte as before the bounds while there are at most 100 errors and small inputs', () => {
    fc.assert(
      fc.property(requestBody, contentType, (raw, type) => {
        const before = unboundedAnswer(raw, type);
        fc.pre(before === undefined || (before.items <= MAX_DETAIL_ITEMS && Buffer.byteLength(before.text) <= ECHO_BUDGET_BYTES));
        const result = onLoop.check(raw, type);
        fc.pre(!(result instanceof Promise));
        const now = result as ChatBodyCheck;
        expect(now.ok ? undefined : now.body).toBe(before?.text);
      }),
      { numRuns: runs(600) },
    );
  }, TIMEOUT);

  it('gives the same answer in a worker as on the event loop', async () => {
    await fc.assert(
      fc.asyncProperty(requestBody, contentType, async (raw, type) => {
        const inline = await onLoop.check(raw, type);
        const worked = inWorker.check(raw, type);
        if (raw.length > 0) expect(worked).toBeInstanceOf(Promise);
        expect(await worked).toEqual(inline);
      }),
      { numRuns: runs(300) },
    );
  }, TIMEOUT);
});

describe('stringifyWithoutRecursion under property-based fuzzing', () => {
  it('writes what JSON.stringify writes for parsed JSON', () => {
    fc.assert(
      fc.property(jsonText, (text) => {
        let value: unknown;
        try {
          value = JSON.parse(text);
        } catch {
          fc.pre(false);
        }
        expect(stringifyWithoutRecursion(value)).toBe(JSON.stringify(value));
      }),
      { numRuns: runs(1000) },
    );
  }, TIMEOUT);
});

describe('pythonFloatRepr under property-based fuzzing', () => {
  it('renders every double as before its fixed-notation shortcut', () => {
    const doubles = fc.oneof(fc.double(), fc.double({ min: 1e-5, max: 1e17 }), fc.integer().map((n) => n * 1.0));
    fc.assert(
      fc.property(doubles, (x) => {
        expect(renderFastApiJson(new PyFloat(x))).toBe(renderFastApiJsonBefore(new PyFloat(x)));
      }),
      { numRuns: runs(5000) },
    );
  }, TIMEOUT);
});

describe('renderFastApiJsonWithin under property-based fuzzing', () => {
  it('gives the exact text when it fits, else valid JSON within the limit', () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary', maxDepth: 6 }), fc.integer({ min: 12, max: 400 }), (value, limit) => {
        const full = renderFastApiJson(value);
        const bounded = renderFastApiJsonWithin(value, limit);
        expect(bounded.bytes).toBe(Buffer.byteLength(bounded.text));
        if (Buffer.byteLength(full) <= limit) {
          expect(bounded).toEqual({ text: full, bytes: Buffer.byteLength(full), truncated: false });
        } else {
          expect(bounded.truncated).toBe(true);
          expect(bounded.bytes).toBeLessThanOrEqual(limit);
          expect(() => JSON.parse(bounded.text) as unknown).not.toThrow();
        }
      }),
      { numRuns: runs(1000) },
    );
  }, TIMEOUT);
});
