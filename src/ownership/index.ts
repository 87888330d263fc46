/** Training resources belong to their team (SPEC 13): who owns what, and the checks that keep it so. */
export { ownershipPolicy, mayUse, type OwnershipPolicy } from './policy.js';
export { OwnershipRegistry, type RegistryOptions } from './registry.js';
export { nounOf, OwnershipGuard, type AnsweredId, type AnswerOrigin } from './guard.js';
export { ModelIdWatch, noModelIdWithin } from './model-id-watch.js';
export { artifactOfModelName, artifactOfCreation } from './artifact.js';
export { JobModelIdReader, type OwnerFields, readJobModelId, readModelNameFields, readOwnerFields } from './owner-fields.js';
export { type StreamRefusal, StreamRefused, type StreamedValue, TopLevelStream } from './top-level-stream.js';
