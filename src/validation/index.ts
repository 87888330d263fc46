// Chat body validation with FastAPI-exact 422 bodies (SPEC 5).
export { validateChatBody, type ChatBody, type ChatValidation } from './chat-body.js';
export type { ValidationDetail } from './detail.js';
export { renderValidationBody } from './validation-body.js';
