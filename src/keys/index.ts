/**
 * API keys made at run time (SPEC 12.1): the admin operations on them, this instance's copy kept
 * in step with the durable store, and the /admin/keys handlers. Checking a presented key is auth/'s.
 */
export { KeyAdmin, type KeyChanges, type KeyView, type KeyWithSecret, type NewKey } from './key-admin.js';
export { startKeySync, type KeySync, type KeySyncOptions } from './key-sync.js';
export { createKeyHandler, getKeyHandler, listKeysHandler, revokeKeyHandler, rotateKeyHandler, updateKeyHandler } from './key-routes.js';
export { expiryNotice, KeyExpiryWatch } from './key-expiry.js';
