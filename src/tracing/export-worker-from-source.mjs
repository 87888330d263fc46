// The export thread when the gateway runs from its TypeScript sources (vitest, `node --import
// tsx`): loader hooks do not reach worker threads on Node 20, so tsx is registered here first.
// The build runs dist/.../export-worker.js directly and never loads this file.
import { register } from 'tsx/esm/api';

register();
await import('./export-worker.ts');
