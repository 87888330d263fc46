/**
 * Usage metering (SPEC 6.4): taps that read `usage` from JSON replies and SSE streams as they
 * are relayed, the forced `include_usage` of streaming requests, and the usage store the
 * admin API reads.
 */
export { createResponseTap, type ResponseTapOptions } from './taps/response-tap.js';
export type { ResponseTap, TapResult } from './taps/tap.js';
export type { Usage } from './taps/usage.js';
export { chargeFor, type Charge, type ChargeBasis } from './charge.js';
export { createPriceBook, type Price, type PriceBook } from './prices.js';
export { forceStreamUsage, type ForcedBody } from './force-stream-usage.js';
export { Ledger, type LedgerEntry, type LedgerOptions } from './ledger.js';
export { contentBytes } from './taps/content-count.js';
export { BACKSLASH, CLOSE_BRACE, CLOSE_BRACKET, COLON, jsonKey, lastKeyValue, nextKeyValue, OPEN_BRACE, OPEN_BRACKET, QUOTE, skipJsonSpace, valueEnd } from './taps/json-scan.js';
export { newLedgerRowId } from './ledger-row-id.js';
export { LEDGER_TEXT_MAX_CHARS, storableText } from './ledger.js';
export { SseEventBoundaries } from './taps/sse-boundaries.js';
export { eventData, mayCarryUsage } from './taps/sse-event.js';
export { NOTHING_SEEN } from './taps/tap.js';
export { LEDGER_VIEW, ledgerRowView, type LedgerViewKind } from './ledger-view.js';
