import { MAX_DETAIL_ITEMS } from './fastapi-422/bounds.js';
import { detailItem, type ValidationDetail } from './fastapi-422/detail.js';
import { decodeJsonText, isJsonContentType } from './json-text.js';
import { decodePythonJson, jsonParseKeepsPythonValues, type PyDict, pythonJsonError, type PyValue, toJsValue } from '../python-json/index.js';

/** A chat body that passed validation; every other property is kept as sent. */
export interface ChatBody {
  model: string;
  messages: Record<string, unknown>[];
  [k: string]: unknown;
}

export type ChatValidation = { ok: true; body: ChatBody } | { ok: false; detail: ValidationDetail[] };

const MISSING = 'Field required';
const NOT_AN_OBJECT = 'Input should be a valid dictionary or object to extract fields from';

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** The happy-path check on JSON.parse's result: no allocation, no second parse. */
function isChatBody(value: unknown): value is ChatBody {
  if (!isPlainObject(value)) return false;
  const { model, messages } = value;
  if (typeof model !== 'string' || !Array.isArray(messages)) return false;
  for (const message of messages) if (!isPlainObject(message)) return false;
  return true;
}

/**
 * Collects detail items up to MAX_DETAIL_ITEMS and only counts the rest: a body of a million
 * wrong messages must not build a million items.
 */
class DetailCollector {
  readonly items: ValidationDetail[] = [];
  count = 0;

  add(build: () => ValidationDetail): void {
    this.count += 1;
    if (this.items.length < MAX_DETAIL_ITEMS) this.items.push(build());
  }

  /** The items to render: the first MAX_DETAIL_ITEMS, then one counting those left out. */
  detail(): ValidationDetail[] {
    const omitted = this.count - this.items.length;
    if (omitted === 0) return this.items;
    // Not FastAPI's (it lists all): shaped like a pydantic error so clients can read it.
    const more = detailItem('too_many_errors', ['body'], `${omitted} more errors not listed`, null, null, { omitted });
    return [...this.items, more];
  }
}

/** A JSON object as either decoder holds it: Python's (a Map) or JSON.parse's. */
type AnyDict = PyDict | Record<string, unknown>;

function isDict(value: unknown): value is AnyDict {
  return value instanceof Map || (isPlainObject(value) && Object.getPrototypeOf(value) === Object.prototype);
}

function fieldOf(dict: AnyDict, key: string): unknown {
  if (dict instanceof Map) return dict.get(key);
  return Object.hasOwn(dict, key) ? dict[key] : undefined;
}

/**
 * What pydantic reports for `ChatCompletionRequest(model: str, messages: list[dict],
 * extra='allow')` validated from `exact`, the body as Python holds it (or JSON.parse's value
 * where that is the same: see python-exact-parse.ts). FastAPI passes from_attributes=True,
 * hence model_attributes_type for non-objects. `js` is the same body as plain JS data.
 */
function chatBodyErrors(exact: unknown, js: unknown): DetailCollector {
  const errors = new DetailCollector();
  if (exact === null) {
    errors.add(() => detailItem('missing', ['body'], MISSING, null, null));
  } else if (!isDict(exact)) {
    errors.add(() => detailItem('model_attributes_type', ['body'], NOT_AN_OBJECT, js, exact));
  } else {
    fieldErrors(exact, js as Record<string, unknown>, errors);
  }
  return errors;
}

function fieldErrors(exact: AnyDict, fields: Record<string, unknown>, errors: DetailCollector): void {
  const model = fieldOf(exact, 'model');
  if (model === undefined) {
    errors.add(() => detailItem('missing', ['body', 'model'], MISSING, fields, exact));
  } else if (typeof model !== 'string') {
    errors.add(() => detailItem('string_type', ['body', 'model'], 'Input should be a valid string', fields['model'], model));
  }
  const messages = fieldOf(exact, 'messages');
  if (messages === undefined) {
    errors.add(() => detailItem('missing', ['body', 'messages'], MISSING, fields, exact));
  } else if (!Array.isArray(messages)) {
    errors.add(() => detailItem('list_type', ['body', 'messages'], 'Input should be a valid list', fields['messages'], messages));
  } else {
    const jsMessages = fields['messages'] as unknown[];
    messages.forEach((message: unknown, i) => {
      if (isDict(message)) return;
      errors.add(() => detailItem('dict_type', ['body', 'messages', i], 'Input should be a valid dictionary', jsMessages[i], message));
    });
  }
}

const NOT_PARSED = Symbol('not parsed');

/** JSON.parse's value, or NOT_PARSED: invalid JSON, or JSON only Python reads (NaN, Infinity), which Python decides. */
function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return NOT_PARSED;
  }
}

/** A failure with the number of errors found, listed or not (ValidationDetail lists at most 101). */
export type CountedChatValidation = { ok: true; body: ChatBody } | { ok: false; detail: ValidationDetail[]; errorCount: number };

function failure(errors: DetailCollector): CountedChatValidation {
  return { ok: false, detail: errors.detail(), errorCount: errors.count };
}

/**
 * The happy path alone: the parsed body when JSON.parse reads a valid chat body, else
 * undefined (then validateChatBodyCountingErrors says why, or accepts what only Python reads).
 */
export function parseValidChatBody(raw: Buffer, contentType: string | undefined): ChatBody | undefined {
  if (raw.length === 0 || !isJsonContentType(contentType)) return undefined;
  const parsed = parseJson(decodeJsonText(raw));
  return isChatBody(parsed) ? parsed : undefined;
}

/** validateChatBody, with the count of errors beyond those listed. */
export function validateChatBodyCountingErrors(raw: Buffer, contentType: string | undefined): CountedChatValidation {
  const errors = new DetailCollector();
  if (raw.length === 0) return failure(chatBodyErrors(null, null));
  if (!isJsonContentType(contentType)) {
    // FastAPI hands pydantic the raw bytes, and its encoder echoes them back as text.
    const text = raw.toString('utf8');
    errors.add(() => detailItem('model_attributes_type', ['body'], NOT_AN_OBJECT, text, text));
    return failure(errors);
  }
  const text = decodeJsonText(raw);
  const parsed = parseJson(text);
  if (isChatBody(parsed)) return { ok: true, body: parsed };
  if (parsed === NOT_PARSED) {
    // Python's message and position, found without keeping values (a body may hold millions).
    const error = pythonJsonError(text);
    if (error !== undefined) {
      errors.add(() => detailItem('json_invalid', ['body', error.pos], 'JSON decode error', {}, new Map(), { error: error.msg }));
      return failure(errors);
    }
  }
  // JSON of the wrong shape (or read by Python only): errors name values as Python holds them.
  const exact = parsed !== NOT_PARSED && jsonParseKeepsPythonValues(text) ? parsed : pythonValueOf(text);
  const js = parsed === NOT_PARSED ? toJsValue(exact as PyValue) : parsed;
  const found = chatBodyErrors(exact, js);
  return found.count === 0 ? { ok: true, body: js as ChatBody } : failure(found);
}

/** Python's value of text it reads. */
function pythonValueOf(text: string): PyValue {
  const decoded = decodePythonJson(text);
  if (!decoded.ok) throw new Error(`Python's decoder refused JSON it had accepted: ${decoded.msg} at ${decoded.pos}`);
  return decoded.value;
}

/**
 * Validates a chat body as the FastAPI backend would (SPEC 5), listing at most
 * MAX_DETAIL_ITEMS errors (then one item counting the rest).
 * raw: the exact request bytes (possibly length 0); contentType: the request's Content-Type
 * header or undefined. The body is only read here; the caller forwards the original bytes.
 */
export function validateChatBody(raw: Buffer, contentType: string | undefined): ChatValidation {
  const result = validateChatBodyCountingErrors(raw, contentType);
  return result.ok ? result : { ok: false, detail: result.detail };
}
