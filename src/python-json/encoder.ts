import { cutJsonString, ELLIPSIS, jsonStringBytesWithin } from './string-bytes.js';
import { PyFloat, PyInt } from './value.js';

/**
 * Python's `repr(float)`: the shortest round-trip digits (the same digits JavaScript picks),
 * laid out Python's way: fixed notation while the decimal point sits in (-4, 16], always with
 * a fractional part (`1.0`), otherwise `1e+16` / `1.5e-05` (signed, at least two exponent digits).
 */
export function pythonFloatRepr(x: number): string {
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const magnitude = Math.abs(x);
  // Where both write fixed notation (JS from 1e-7, Python from 1e-4, both below 1e16) the
  // digits agree, and only Python's `.0` on integral values differs: the common case, fast.
  if (magnitude >= 1e-4 && magnitude < 1e16) return Number.isInteger(x) ? `${x}.0` : String(x);
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

/** Python's text for a non-string scalar, or undefined for a container. */
function scalarText(value: unknown): string | undefined {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
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

/** One member of a container: its key (dicts only) and value. The root is a member without a parent. */
type Member = readonly [key: string | undefined, value: unknown];

/**
 * A container's members in Python's order, read lazily (a list may hold a million items).
 * FastAPI's jsonable_encoder (sqlalchemy_safe=True) drops keys starting with "_sa".
 */
function* membersOf(value: object): Generator<Member, void, undefined> {
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) yield [undefined, value[i]];
    return;
  }
  const entries: Iterable<[string, unknown]> = value instanceof Map ? (value as Map<string, unknown>) : Object.entries(value);
  for (const [key, item] of entries) if (!key.startsWith('_sa')) yield [key, item];
}

interface OpenContainer {
  readonly isDict: boolean;
  readonly members: Generator<Member, void, undefined>;
  first: boolean;
}

/** The text written so far, its UTF-8 size, and the bytes held back for closing brackets. */
class Output {
  readonly parts: string[] = [];
  bytes = 0;
  closers = 0;
  constructor(
    readonly limit: number,
    /** Bytes kept free for a truncation marker (0 when an overflow just fails). */
    readonly reserve: number,
  ) {}

  get bounded(): boolean {
    return this.limit !== Number.POSITIVE_INFINITY;
  }

  /** Bytes the next member may take. */
  get room(): number {
    return this.limit - this.bytes - this.closers - this.reserve;
  }

  write(text: string, bytes: number): void {
    this.parts.push(text);
    this.bytes += bytes;
  }
}

/** What precedes a member's value (separator, key and colon), and its UTF-8 size. */
type Lead = readonly [text: string, bytes: number];

/** The lead of a member, or undefined when it alone exceeds `room`. */
function leadOf(parent: OpenContainer | undefined, key: string | undefined, room: number, out: Output): Lead | undefined {
  const separator = parent !== undefined && !parent.first ? ',' : '';
  if (key === undefined) return [separator, separator.length];
  const keyBytes = out.bounded ? jsonStringBytesWithin(key, room - separator.length - 1) : 0;
  if (keyBytes === Number.POSITIVE_INFINITY) return undefined;
  return [`${separator}${JSON.stringify(key)}:`, separator.length + keyBytes + 1];
}

/** Writes a member's lead and value (or a container's opening bracket); false when it does not fit. */
function writeMember(parent: OpenContainer | undefined, [key, value]: Member, out: Output, open: OpenContainer[]): boolean {
  const lead = leadOf(parent, key, out.room, out);
  if (lead === undefined) return false;
  const [leadText, leadBytes] = lead;
  const room = out.room - leadBytes;
  let text: string | undefined;
  let bytes: number;
  if (typeof value === 'string') {
    // JSON.stringify escapes exactly what Python's ensure_ascii=False encoder escapes:
    // `"`, `\`, and controls below 0x20 (\b \f \n \r \t by name, others as lowercase \u00XX).
    bytes = out.bounded ? jsonStringBytesWithin(value, room) : 0;
    if (bytes > room) return false;
    text = JSON.stringify(value);
  } else {
    text = scalarText(value);
    if (text === undefined) {
      if (room < 2) return false;
      out.write(`${leadText}${Array.isArray(value) ? '[' : '{'}`, leadBytes + 1);
      out.closers += 1;
      open.push({ isDict: !Array.isArray(value), members: membersOf(value as object), first: true });
      return true;
    }
    bytes = out.bounded ? Buffer.byteLength(text) : 0;
    if (bytes > room) return false;
  }
  out.write(`${leadText}${text}`, leadBytes + bytes);
  return true;
}

const MARKER = JSON.stringify(ELLIPSIS);
/** Room a marker needs at worst: `,"…":"…"`. */
const MARKER_RESERVE = 1 + 2 * Buffer.byteLength(MARKER) + 1;

/**
 * Where a member did not fit: a string is cut and ends in `…`; anything else is replaced by
 * `"…"` (in a dict, the member `"…":"…"`). Then every open container is closed.
 */
function writeCut(parent: OpenContainer | undefined, [key, value]: Member, out: Output, open: OpenContainer[]): void {
  const available = out.room + out.reserve;
  const lead = typeof value === 'string' ? leadOf(parent, key, available - 5, out) : undefined;
  if (lead !== undefined) {
    const [leadText, leadBytes] = lead;
    const cut = cutJsonString(value as string, available - leadBytes);
    out.write(`${leadText}${cut.text}`, leadBytes + cut.bytes);
  } else {
    const separator = parent !== undefined && !parent.first ? ',' : '';
    const marker = parent?.isDict ? `${separator}${MARKER}:${MARKER}` : `${separator}${MARKER}`;
    out.write(marker, Buffer.byteLength(marker));
  }
  for (let container = open.pop(); container !== undefined; container = open.pop()) {
    out.write(container.isDict ? '}' : ']', 1);
    out.closers -= 1;
  }
}

/** Writes `root` into `out`; false when it did not fit (then, with `truncate`, it was cut to fit). */
function writeJson(root: unknown, out: Output, truncate: boolean): boolean {
  const open: OpenContainer[] = [];
  let member: Member = [undefined, root];
  for (;;) {
    const parent = open[open.length - 1];
    if (!writeMember(parent, member, out, open)) {
      if (truncate) writeCut(parent, member, out, open);
      return false;
    }
    if (parent !== undefined) parent.first = false;
    // Find the next member, closing the containers that have none left.
    for (;;) {
      const container = open[open.length - 1];
      if (container === undefined) return true;
      const next = container.members.next();
      if (!next.done) {
        member = next.value;
        break;
      }
      open.pop();
      out.closers -= 1;
      out.write(container.isDict ? '}' : ']', 1);
    }
  }
}

/**
 * What FastAPI writes for `value` in an error body: `jsonable_encoder` (which drops dict keys
 * starting with "_sa") then `json.dumps(ensure_ascii=False, allow_nan=False, separators=(",",
 * ":"))`. Takes a PyValue tree or plain JS data (arrays, plain objects, Maps). Iterative:
 * inputs can nest deeper than the call stack.
 */
export function renderFastApiJson(root: unknown): string {
  const out = new Output(Number.POSITIVE_INFINITY, 0);
  writeJson(root, out, false);
  return out.parts.join('');
}

/** A rendering that fits a byte limit. */
export interface BoundedJson {
  readonly text: string;
  /** UTF-8 length of `text`. */
  readonly bytes: number;
  /** True when the value did not fit and was cut (see renderFastApiJsonWithin). */
  readonly truncated: boolean;
}

/**
 * renderFastApiJson's text when it takes at most `limit` UTF-8 bytes; otherwise still valid
 * JSON of at most `limit` bytes (a limit below 12 counts as 12): the rendering up to the first
 * member that did not fit, which is cut (a string, ending in `…`) or replaced by `"…"`, with
 * every open container closed. The work done is bounded by the limit, not by the value's size
 * (lists and Maps are read lazily).
 */
export function renderFastApiJsonWithin(root: unknown, limit: number): BoundedJson {
  const exact = new Output(limit, 0);
  if (writeJson(root, exact, false)) return { text: exact.parts.join(''), bytes: exact.bytes, truncated: false };
  const cut = new Output(Math.max(limit, MARKER_RESERVE), MARKER_RESERVE);
  writeJson(root, cut, true);
  return { text: cut.parts.join(''), bytes: cut.bytes, truncated: true };
}
