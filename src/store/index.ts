export { openDurableStore, type OpenStoreOptions } from './open.js';
export type * from './core/durable-store.js';
export { DatabaseUnavailableError, InvalidCursorError, isRecordRefused, KeyIdTakenError, SchemaTooNewError, SecretDigestTakenError, TeamIdTakenError } from './core/errors.js';
export type { StoreLogger } from './core/logger.js';
export type { SiblingChannel } from './core/change-feed.js';
export { StoreHandle, type StoreHandleOptions } from './handle.js';
export { BatchWriter, type BatchWriterOptions, type DropReason } from './batch-writer.js';
export { StoreMirror, type StoreMirrorOptions } from './store-mirror.js';
