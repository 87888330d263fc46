// Chat body validation with FastAPI-exact 422 bodies (SPEC 5), and the one check the pipeline
// runs on a chat body (validation, token estimate, forced stream usage), off the event loop
// when the body is costly.
export { MAX_DETAIL_ITEMS, MAX_VALIDATION_BODY_BYTES } from './fastapi-422/bounds.js';
export { validateChatBody, type ChatBody, type ChatValidation } from './chat-validation.js';
export type { ChatBodyCheck } from './check-now.js';
export { createChatBodyChecker, type ChatBodyChecker, type ChatBodyCheckerOptions } from './chat-body-checker.js';
export type { ChatFacts, ChatSampling } from './chat-facts.js';
// Guarded bodies' owner fields are read as Python reads them (src/ownership, SPEC 13.1).
export type { ValidationDetail } from './fastapi-422/detail.js';
export { estimateChatTokens } from './token-estimate.js';
export { renderValidationBody } from './fastapi-422/validation-body.js';
export { WorkerPoolError } from './worker-pool.js';
export { chatFactsOf } from './chat-facts.js';
export { ECHO_BUDGET_BYTES } from './fastapi-422/bounds.js';
export { stringifyWithoutRecursion } from './stack-safe-stringify.js';
export { isCheapToParse } from './parse-cost.js';
export { promptCharacters } from './token-estimate.js';
export { detailItem, renderableInput } from './fastapi-422/detail.js';
export { decodeJsonText, isJsonContentType } from './json-text.js';
export { INLINE_BOUNDS } from './chat-body-checker.js';
