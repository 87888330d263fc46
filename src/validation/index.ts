// Chat body validation with FastAPI-exact 422 bodies (SPEC 5).
export { MAX_DETAIL_ITEMS, MAX_VALIDATION_BODY_BYTES } from './bounds.js';
export { validateChatBody, type ChatBody, type ChatValidation } from './chat-body.js';
export type { ValidationDetail } from './detail.js';
export { estimateChatTokens } from './token-estimate.js';
export { renderValidationBody } from './validation-body.js';
