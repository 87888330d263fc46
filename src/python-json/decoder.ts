import { PyFloat, PyInt, type PyDict, type PyValue } from './value.js';

/*
 * A port of CPython 3.12's json decoder (Modules/_json.c scanner + json/decoder.py), used only
 * once JSON.parse has failed or the body's shape is wrong: FastAPI reports Python's own message
 * and position, and echoes Python's values. Target is 3.12 (3.13 added "Illegal trailing comma
 * before end of object/array"; 3.12 reports a trailing comma as "Expecting property name
 * enclosed in double quotes" / "Expecting value"). Like Python, `NaN`, `Infinity` and
 * `-Infinity` are accepted: the backend accepts them, so the gateway does too.
 * Python's nesting limit and its 4300-digit int limit (both end in a FastAPI 400) are applied
 * only where a reading must be certain (`pythonTopLevelMembers`, with `PythonReadLimits`).
 */

export type PythonJsonResult =
  | { readonly ok: true; readonly value: PyValue }
  | { readonly ok: false; readonly msg: string; readonly pos: number };

/**
 * Where Python's json.loads fails on JSON that is otherwise valid: nesting past its recursion
 * limit (1000 frames, shared with the frames already on the stack) and ints of more than 4300
 * digits (Python 3.11+). A reader that must be certain refuses at or before these.
 */
export interface PythonReadLimits {
  readonly maxDepth: number;
  readonly maxIntDigits: number;
}

const UNLIMITED: PythonReadLimits = { maxDepth: Number.POSITIVE_INFINITY, maxIntDigits: Number.POSITIVE_INFINITY };

class DecodeError {
  constructor(
    readonly msg: string,
    readonly pos: number,
  ) {}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function isWhitespace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}

function skipWhitespace(s: string, idx: number): number {
  while (idx < s.length && isWhitespace(s.charCodeAt(idx))) idx++;
  return idx;
}

function isDigit(c: number): boolean {
  return c >= 0x30 && c <= 0x39;
}

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  '"': '"', '\\': '\\', '/': '/', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t',
};

/** Four hex digits at `at`, or -1. */
function hex4(s: string, at: number): number {
  let value = 0;
  for (let i = at; i < at + 4; i++) {
    const digit = parseInt(s.charAt(i), 16);
    if (Number.isNaN(digit)) return -1;
    value = (value << 4) | digit;
  }
  return value;
}

/** scanstring_unicode: `end` is just past the opening quote; returns the text and the index past the closing quote. */
function scanString(s: string, end: number): [string, number] {
  const begin = end - 1;
  const len = s.length;
  let out = '';
  for (;;) {
    let next = end;
    let c = 0;
    for (; next < len; next++) {
      c = s.charCodeAt(next);
      if (c === QUOTE || c === BACKSLASH) break;
      if (c <= 0x1f) throw new DecodeError('Invalid control character at', next);
    }
    if (next === len) throw new DecodeError('Unterminated string starting at', begin);
    out += s.slice(end, next);
    next++;
    if (c === QUOTE) return [out, next];
    if (next === len) throw new DecodeError('Unterminated string starting at', begin);
    const escape = s.charAt(next);
    if (escape !== 'u') {
      end = next + 1;
      const decoded = SIMPLE_ESCAPES[escape];
      if (decoded === undefined) throw new DecodeError('Invalid \\escape', end - 2);
      out += decoded;
      continue;
    }
    next++;
    end = next + 4;
    if (end >= len) throw new DecodeError('Invalid \\uXXXX escape', next - 1);
    let unit = hex4(s, next);
    if (unit < 0) throw new DecodeError('Invalid \\uXXXX escape', end - 5);
    if (unit >= 0xd800 && unit <= 0xdbff && end + 6 < len && s.charCodeAt(end) === BACKSLASH && s.charAt(end + 1) === 'u') {
      const low = hex4(s, end + 2);
      if (low < 0) throw new DecodeError('Invalid \\uXXXX escape', end + 1);
      if (low >= 0xdc00 && low <= 0xdfff) {
        unit = 0x10000 + ((unit - 0xd800) << 10) + (low - 0xdc00);
        end += 6;
      }
    }
    out += String.fromCodePoint(unit);
  }
}

/** _match_number_unicode: ints keep their digits, floats go through correctly rounded parsing. */
function scanNumber(s: string, start: number, maxIntDigits: number): [PyValue, number] {
  const lastIdx = s.length - 1;
  let idx = start;
  if (s.charCodeAt(idx) === 0x2d /* - */) {
    idx++;
    if (idx > lastIdx) throw new DecodeError('Expecting value', start);
  }
  const first = s.charCodeAt(idx);
  if (first >= 0x31 && first <= 0x39) {
    idx++;
    while (idx <= lastIdx && isDigit(s.charCodeAt(idx))) idx++;
  } else if (first === 0x30) {
    idx++;
  } else {
    throw new DecodeError('Expecting value', start);
  }
  let isFloat = false;
  if (idx < lastIdx && s.charCodeAt(idx) === 0x2e /* . */ && isDigit(s.charCodeAt(idx + 1))) {
    isFloat = true;
    idx += 2;
    while (idx <= lastIdx && isDigit(s.charCodeAt(idx))) idx++;
  }
  if (idx < lastIdx && (s.charAt(idx) === 'e' || s.charAt(idx) === 'E')) {
    const eStart = idx;
    idx++;
    if (idx < lastIdx && (s.charAt(idx) === '-' || s.charAt(idx) === '+')) idx++;
    while (idx <= lastIdx && isDigit(s.charCodeAt(idx))) idx++;
    if (isDigit(s.charCodeAt(idx - 1))) isFloat = true;
    else idx = eStart;
  }
  const text = s.slice(start, idx);
  if (isFloat) return [new PyFloat(Number(text)), idx];
  if (text.length - (text.startsWith('-') ? 1 : 0) > maxIntDigits) throw new DecodeError('Exceeds the limit for integer string conversion', start);
  return [new PyInt(text === '-0' ? '0' : text), idx];
}

/** Named constants scan_once_unicode recognises, by first character. */
const CONSTANTS: ReadonlyArray<readonly [string, PyValue]> = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', new PyFloat(Number.NaN)],
  ['Infinity', new PyFloat(Number.POSITIVE_INFINITY)],
  ['-Infinity', new PyFloat(Number.NEGATIVE_INFINITY)],
];

/** A scalar at `idx` (not `{`, `[`), as scan_once_unicode reads it. */
function scanScalar(s: string, idx: number, limits: PythonReadLimits): [PyValue, number] {
  if (idx >= s.length) throw new DecodeError('Expecting value', idx);
  if (s.charCodeAt(idx) === QUOTE) return scanString(s, idx + 1);
  for (const [word, value] of CONSTANTS) {
    if (s.startsWith(word, idx)) return [value, idx + word.length];
  }
  return scanNumber(s, idx, limits.maxIntDigits);
}

type OpenContainer = { readonly list: PyValue[] } | { readonly dict: PyDict; key: string };

/** Reads `"key"` then `:` (whitespace allowed around), returns the key and the index of its value. */
function scanKey(s: string, idx: number): [string, number] {
  if (idx >= s.length || s.charCodeAt(idx) !== QUOTE) {
    throw new DecodeError('Expecting property name enclosed in double quotes', idx);
  }
  const [key, afterKey] = scanString(s, idx + 1);
  const colon = skipWhitespace(s, afterKey);
  if (colon >= s.length || s.charAt(colon) !== ':') throw new DecodeError("Expecting ':' delimiter", colon);
  return [key, skipWhitespace(s, colon + 1)];
}

/** The frames pushed when only the syntax is checked: values are read but never kept. */
const LIST_SYNTAX: OpenContainer = { list: [] };
const DICT_SYNTAX: OpenContainer = { dict: new Map(), key: '' };

/**
 * One JSON term starting at `start`, with containers handled on an explicit stack rather than
 * by recursion (a body may nest far deeper than the JS call stack allows). Without `build`,
 * containers stay empty: only the syntax (and so the first error) is found, in little memory.
 */
function scanValue(s: string, start: number, build: boolean, limits: PythonReadLimits = UNLIMITED): [PyValue, number] {
  const open: OpenContainer[] = [];
  let idx = start;
  for (;;) {
    let value: PyValue;
    const c = s.charAt(idx);
    if (c === '{' || c === '[') {
      // Python recurses into every container, empty ones too.
      if (open.length >= limits.maxDepth) throw new DecodeError('Nested too deep', idx);
      idx = skipWhitespace(s, idx + 1);
      const close = c === '{' ? '}' : ']';
      if (s.charAt(idx) !== close) {
        if (c === '[') {
          open.push(build ? { list: [] } : LIST_SYNTAX);
        } else {
          const [key, valueIdx] = scanKey(s, idx);
          open.push(build ? { dict: new Map(), key } : DICT_SYNTAX);
          idx = valueIdx;
        }
        continue;
      }
      value = c === '{' ? new Map() : [];
      idx++;
    } else {
      [value, idx] = scanScalar(s, idx, limits);
    }
    // A term is complete: hand it to the innermost container, closing containers as they end.
    for (;;) {
      const parent = open[open.length - 1];
      if (parent === undefined) return [value, idx];
      if (build) {
        if ('list' in parent) parent.list.push(value);
        else parent.dict.set(parent.key, value);
      }
      idx = skipWhitespace(s, idx);
      const close = 'list' in parent ? ']' : '}';
      if (s.charAt(idx) === close) {
        open.pop();
        value = 'list' in parent ? parent.list : parent.dict;
        idx++;
        continue;
      }
      if (s.charAt(idx) !== ',') throw new DecodeError("Expecting ',' delimiter", idx);
      idx = skipWhitespace(s, idx + 1);
      if (!('list' in parent)) [parent.key, idx] = scanKey(s, idx);
      break;
    }
  }
}

/** Python counts code points; JS strings count UTF-16 units. */
function codePointOffset(s: string, unitOffset: number): number {
  let pairs = 0;
  for (let i = 1; i < unitOffset; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xdc00 && c <= 0xdfff) {
      const prev = s.charCodeAt(i - 1);
      if (prev >= 0xd800 && prev <= 0xdbff) pairs++;
    }
  }
  return unitOffset - pairs;
}

/** `json.loads(text)` for already decoded text: the value, or JSONDecodeError's msg and pos. */
export function decodePythonJson(text: string): PythonJsonResult {
  return scanText(text, true);
}

/**
 * JSONDecodeError's msg and pos for `text`, or undefined when Python reads it. Keeps none of
 * the values, so a 10 MB body of a million containers costs little memory.
 */
export function pythonJsonError(text: string): { readonly msg: string; readonly pos: number } | undefined {
  const result = scanText(text, false);
  return result.ok ? undefined : { msg: result.msg, pos: result.pos };
}

function scanText(text: string, build: boolean): PythonJsonResult {
  try {
    const [value, end] = scanValue(text, skipWhitespace(text, 0), build);
    const rest = skipWhitespace(text, end);
    if (rest !== text.length) throw new DecodeError('Extra data', rest);
    return { ok: true, value };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { ok: false, msg: err.msg, pos: codePointOffset(text, err.pos) };
  }
}

export type TopLevelMembers =
  | { readonly ok: true; readonly members: ReadonlyArray<readonly [string, PyValue]> }
  | { readonly ok: false; readonly msg: string; readonly pos: number };

/**
 * `json.loads(text)` for a text that must be one object, reporting its top-level members named
 * in `wanted` as written — a repeated key as often as it appears (Python keeps the last) — with
 * their values as Python reads them; other values are only checked. Fails where json.loads
 * fails, where it would exceed `limits`, and on a text that is not an object ("Expecting '{'").
 */
export function pythonTopLevelMembers(text: string, wanted: ReadonlySet<string>, limits: PythonReadLimits): TopLevelMembers {
  const members: Array<readonly [string, PyValue]> = [];
  // The object itself is one level: its members' values may nest one less.
  const memberLimits = { ...limits, maxDepth: limits.maxDepth - 1 };
  try {
    let idx = skipWhitespace(text, 0);
    if (text.charAt(idx) !== '{') throw new DecodeError("Expecting '{'", idx);
    idx = skipWhitespace(text, idx + 1);
    if (text.charAt(idx) === '}') idx++;
    else {
      for (;;) {
        const [key, valueIdx] = scanKey(text, idx);
        const kept = wanted.has(key);
        const [value, end] = scanValue(text, valueIdx, kept, memberLimits);
        if (kept) members.push([key, value]);
        idx = skipWhitespace(text, end);
        if (text.charAt(idx) === '}') break;
        if (text.charAt(idx) !== ',') throw new DecodeError("Expecting ',' delimiter", idx);
        idx = skipWhitespace(text, idx + 1);
      }
      idx++;
    }
    const rest = skipWhitespace(text, idx);
    if (rest !== text.length) throw new DecodeError('Extra data', rest);
    return { ok: true, members };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    return { ok: false, msg: err.msg, pos: codePointOffset(text, err.pos) };
  }
}
