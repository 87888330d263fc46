/** The operations app (health, readiness, metrics, /admin/*) and what its tests and the gateway read of it. */
export { createOperationsApp, type ReloadResult } from './app.js';
export { ADMIN_ROUTES, adminPaths } from './routes.js';
export { AuditTrail, audited, databaseUnavailable, listAuditHandler } from './audit.js';
export { overviewHandler } from './overview.js';
export { renderErrors } from './app.js';
export { csvRequested, parseLedgerPageQuery, parseUsageQuery } from './usage-query.js';
export { ledgerRowsHandler, usageHandler } from './usage.js';
