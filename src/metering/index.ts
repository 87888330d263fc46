/**
 * Usage metering (SPEC 6.4): taps that read `usage` from JSON replies and SSE streams as they
 * are relayed, the forced `include_usage` of streaming requests, and the usage store the
 * admin API reads.
 */
export { createResponseTap, type ResponseTapOptions } from './response-tap.js';
export type { ResponseTap, TapResult } from './tap.js';
export type { Usage } from './usage.js';
export { chargeFor, type Charge, type ChargeBasis } from './charge.js';
export { createPriceBook, type Price, type PriceBook } from './prices.js';
export { forceStreamUsage, type ForcedBody } from './force-stream-usage.js';
export { createUsageStore } from './create-usage-store.js';
export type { UsageStore, UsageStoreEvents, UsageStoreOptions } from './usage-store.js';
export type { UsageRecord, UsageCounts } from './usage-record.js';
export type { UsageQuery, UsageRow, UsageGroupBy } from './usage-aggregate.js';
