// The 422 rendering as it was before bounds were added (commit 665e24f), kept verbatim: the
// oracle of the fuzz test's exactness property and the "before" of bench/hostile-bodies/hostile-bodies.ts.
// Not used by the gateway.
import { PyFloat, PyInt } from '../../../src/python-json/index.js';

/**
 * Python's `repr(float)`: the shortest round-trip digits (the same digits JavaScript picks),
 * laid out Python's way: fixed notation while the decimal point sits in (-4, 16], always with
 * a fractional part (`1.0`), otherwise `1e+16` / `1.5e-05` (signed, at least two exponent digits).
 */
function pythonFloatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const [mantissa = '', exponent = '0'] = x.toExponential().split('e');
  const sign = mantissa.startsWith('-') ? '-' : '';
  const digits = mantissa.replace('-', '').replace('.', '');
  const exp = Number(exponent);
  const point = exp + 1; // digits are 0.d1d2... × 10^point
  if (point <= -4 || point > 16) {
    const fraction = digits.length > 1 ? `.${digits.slice(1)}` : '';
    const expText = String(Math.abs(exp)).padStart(2, '0');
    return `${sign}${digits[0] ?? ''}${fraction}e${exp < 0 ? '-' : '+'}${expText}`;
  }
  if (point <= 0) return `${sign}0.${'0'.repeat(-point)}${digits}`;
  if (point >= digits.length) return `${sign}${digits}${'0'.repeat(point - digits.length)}.0`;
  return `${sign}${digits.slice(0, point)}.${digits.slice(point)}`;
}

function renderFloat(x: number): string {
  // Python's encoder (allow_nan=False) raises here and FastAPI answers a bare 500; we keep the
  // 422 and its body valid JSON instead.
  return Number.isFinite(x) ? pythonFloatRepr(x) : 'null';
}

function renderNumber(x: number): string {
  // A plain JS number cannot say whether it was 1 or 1.0: integral values render as ints.
  if (!Number.isFinite(x)) return 'null';
  if (Number.isInteger(x)) return Math.abs(x) < 1e21 ? String(x) : BigInt(x).toString();
  return pythonFloatRepr(x);
}

/** Text emitted as is, to tell punctuation apart from string values on the work stack. */
class Punct {
  constructor(readonly text: string) {}
}
const OPEN_LIST = new Punct('[');
const CLOSE_LIST = new Punct(']');
const OPEN_DICT = new Punct('{');
const CLOSE_DICT = new Punct('}');
const COMMA = new Punct(',');

function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      // JSON.stringify escapes exactly what Python's ensure_ascii=False encoder escapes:
      // `"`, `\`, and controls below 0x20 (\b \f \n \r \t by name, others as lowercase \u00XX).
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      return renderNumber(value);
    case 'bigint':
      return value.toString();
    case 'object':
      if (value instanceof PyInt) return value.text;
      if (value instanceof PyFloat) return renderFloat(value.value);
      return undefined;
    default:
      return JSON.stringify(String(value));
  }
}

function entriesOf(value: object): Iterable<[string, unknown]> {
  return value instanceof Map ? (value as Map<string, unknown>) : Object.entries(value);
}

/** Pushes a container's parts in reverse, so popping emits them in order. */
function pushContainer(value: object, stack: unknown[]): void {
  if (Array.isArray(value)) {
    stack.push(CLOSE_LIST);
    for (let i = value.length - 1; i >= 0; i--) {
      stack.push(value[i]);
      if (i > 0) stack.push(COMMA);
    }
    stack.push(OPEN_LIST);
    return;
  }
  const parts: unknown[] = [];
  for (const [key, item] of entriesOf(value)) {
    // FastAPI's jsonable_encoder (sqlalchemy_safe=True) drops keys starting with "_sa".
    if (key.startsWith('_sa')) continue;
    if (parts.length > 0) parts.push(COMMA);
    parts.push(new Punct(`${JSON.stringify(key)}:`), item);
  }
  stack.push(CLOSE_DICT);
  for (let i = parts.length - 1; i >= 0; i--) stack.push(parts[i]);
  stack.push(OPEN_DICT);
}

/**
 * What FastAPI writes for `value` in an error body: `jsonable_encoder` (which drops dict keys
 * starting with "_sa") then `json.dumps(ensure_ascii=False, allow_nan=False, separators=(",",
 * ":"))`. Takes a PyValue tree or plain JS data (arrays, plain objects, Maps). Iterative:
 * inputs can nest deeper than the call stack.
 */
export function renderFastApiJson(root: unknown): string {
  const out: string[] = [];
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (value instanceof Punct) {
      out.push(value.text);
      continue;
    }
    const text = scalarText(value);
    if (text !== undefined) out.push(text);
    else pushContainer(value as object, stack);
  }
  return out.join('');
}
