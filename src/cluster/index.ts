export { replacementDelayMs, startPrimary, type PrimaryOptions } from './primary.js';
export { joinPrimary, type WorkerLink } from './worker.js';
export { ledgerJournalDir, workerCount } from './workers.js';
