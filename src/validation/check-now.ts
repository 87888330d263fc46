import { parseValidChatBody, validateChatBodyCountingErrors } from './chat-validation.js';
import { chatFactsOf, type ChatFactSettings, type ChatFacts } from './chat-facts.js';
import { renderValidationBody } from './fastapi-422/validation-body.js';

/** The outcome of checking a chat body: its facts, or the 422 to answer. */
export type ChatBodyCheck =
  | { readonly ok: true; readonly facts: ChatFacts }
  | {
      readonly ok: false;
      /** The exact (bounded) FastAPI 422 JSON text. */
      readonly body: string;
      /** Errors found, including those the body leaves out past MAX_DETAIL_ITEMS. */
      readonly errorCount: number;
    };

/** The whole check on the calling thread: validation, then the facts or the rendered 422. */
export function checkChatBodyNow(raw: Buffer, contentType: string | undefined, settings: ChatFactSettings): ChatBodyCheck {
  const result = validateChatBodyCountingErrors(raw, contentType);
  if (result.ok) return { ok: true, facts: chatFactsOf(raw, result.body, settings) };
  return { ok: false, body: renderValidationBody(result.detail), errorCount: result.errorCount };
}

/**
 * The happy path alone: the facts when JSON.parse reads a valid chat body, else undefined
 * (the body is invalid, or only Python's decoder reads it) and the full check must run.
 */
export function checkValidChatBodyNow(raw: Buffer, contentType: string | undefined, settings: ChatFactSettings): ChatBodyCheck | undefined {
  const body = parseValidChatBody(raw, contentType);
  return body === undefined ? undefined : { ok: true, facts: chatFactsOf(raw, body, settings) };
}
