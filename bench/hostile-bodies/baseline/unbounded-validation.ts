// validateChatBody and renderValidationBody as they were before bounds were added (commit
// 665e24f), kept verbatim: the oracle of the fuzz test's exactness property and the "before"
// of bench/hostile-bodies/hostile-bodies.ts. Not used by the gateway.
import { detailItem, renderableInput, type ValidationDetail } from '../../../src/validation/index.js';
import { decodeJsonText, isJsonContentType } from '../../../src/validation/index.js';
import { decodePythonJson } from '../../../src/python-json/index.js';
import { toJsValue, type PyValue } from '../../../src/python-json/index.js';
import { renderFastApiJson } from './unbounded-json-encoder.js';

/** A chat body that passed validation; every other property is kept as sent. */
interface ChatBody {
  model: string;
  messages: Record<string, unknown>[];
  [k: string]: unknown;
}

type ChatValidation = { ok: true; body: ChatBody } | { ok: false; detail: ValidationDetail[] };

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
 * What pydantic reports for `ChatCompletionRequest(model: str, messages: list[dict],
 * extra='allow')` validated from `body` (FastAPI passes from_attributes=True, hence
 * model_attributes_type for non-objects). `js` is the same value as plain JS data.
 */
function chatBodyErrors(body: PyValue, js: unknown): ValidationDetail[] {
  if (body === null) return [detailItem('missing', ['body'], MISSING, null, null)];
  if (!(body instanceof Map)) return [detailItem('model_attributes_type', ['body'], NOT_AN_OBJECT, js, body)];
  const fields = js as Record<string, unknown>;
  const errors: ValidationDetail[] = [];
  const model = body.get('model');
  if (model === undefined) {
    errors.push(detailItem('missing', ['body', 'model'], MISSING, js, body));
  } else if (typeof model !== 'string') {
    errors.push(detailItem('string_type', ['body', 'model'], 'Input should be a valid string', fields['model'], model));
  }
  const messages = body.get('messages');
  if (messages === undefined) {
    errors.push(detailItem('missing', ['body', 'messages'], MISSING, js, body));
  } else if (!Array.isArray(messages)) {
    errors.push(detailItem('list_type', ['body', 'messages'], 'Input should be a valid list', fields['messages'], messages));
  } else {
    const jsMessages = fields['messages'] as unknown[];
    messages.forEach((message, i) => {
      if (message instanceof Map) return;
      errors.push(detailItem('dict_type', ['body', 'messages', i], 'Input should be a valid dictionary', jsMessages[i], message));
    });
  }
  return errors;
}

/**
 * Validates a chat body exactly as the FastAPI backend would (SPEC 5).
 * raw: the exact request bytes (possibly length 0); contentType: the request's Content-Type
 * header or undefined. The body is only read here; the caller forwards the original bytes.
 */
export function validateChatBodyUnbounded(raw: Buffer, contentType: string | undefined): ChatValidation {
  if (raw.length === 0) return { ok: false, detail: chatBodyErrors(null, null) };
  if (!isJsonContentType(contentType)) {
    // FastAPI hands pydantic the raw bytes, and its encoder echoes them back as text.
    const text = raw.toString('utf8');
    return { ok: false, detail: [detailItem('model_attributes_type', ['body'], NOT_AN_OBJECT, text, text)] };
  }
  const text = decodeJsonText(raw);
  let parsed: unknown;
  let parsedOk = false;
  try {
    parsed = JSON.parse(text);
    parsedOk = true;
  } catch {
    // Either invalid JSON, or JSON that only Python accepts (NaN, Infinity): Python decides.
  }
  if (parsedOk && isChatBody(parsed)) return { ok: true, body: parsed };

  // Error path: re-read with Python's decoder for its message, position and exact values.
  const decoded = decodePythonJson(text);
  if (!decoded.ok) {
    const error = { error: decoded.msg };
    return { ok: false, detail: [detailItem('json_invalid', ['body', decoded.pos], 'JSON decode error', {}, new Map(), error)] };
  }
  const js = parsedOk ? parsed : toJsValue(decoded.value);
  const detail = chatBodyErrors(decoded.value, js);
  if (detail.length === 0) return { ok: true, body: js as ChatBody };
  return { ok: false, detail };
}

/**
 * The exact JSON text FastAPI sends with a 422: `{"detail":[...]}` as Starlette's JSONResponse
 * writes it (compact separators, non-ASCII kept, keys in pydantic's order).
 */
export function renderValidationBodyUnbounded(detail: readonly ValidationDetail[]): string {
  const items = detail.map((item) => {
    const head = `{"type":${JSON.stringify(item.type)},"loc":${renderFastApiJson(item.loc)},"msg":${JSON.stringify(item.msg)}`;
    const input = `,"input":${renderFastApiJson(renderableInput(item))}`;
    const ctx = item.ctx === undefined ? '' : `,"ctx":${renderFastApiJson(item.ctx)}`;
    return `${head}${input}${ctx}}`;
  });
  return `{"detail":[${items.join(',')}]}`;
}

/** The answer before bounds: the 422 text and its number of items, or undefined when valid. */
export function unboundedAnswer(raw: Buffer, contentType: string | undefined): { text: string; items: number } | undefined {
  const result = validateChatBodyUnbounded(raw, contentType);
  return result.ok ? undefined : { text: renderValidationBodyUnbounded(result.detail), items: result.detail.length };
}
