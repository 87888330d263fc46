export { replacementDelayMs, startPrimary, type PrimaryOptions } from './primary.js';
export { joinPrimary, type WorkerLink } from './worker.js';
export { workerCount } from './workers.js';
