import * as crypto from 'node:crypto';

const { createHash, randomBytes, timingSafeEqual } = crypto;

/**
 * SHA-256 hex digest of a presented key: the only form in which keys are stored or compared.
 * Once per request: the one-shot crypto.hash (Node ≥ 20.12) makes no Hash object (1.5 µs
 * instead of 2.8 per key measured); older Node 20 releases take the Hash object.
 */
export const sha256Hex: (secret: string) => string =
  typeof crypto.hash === 'function' ? (secret) => crypto.hash('sha256', secret, 'hex') : (secret) => createHash('sha256').update(secret, 'utf8').digest('hex');

/**
 * Looks up keys by digest. The lookup is a hash-table probe on the digest of the presented
 * secret, which leaks nothing about the stored secrets; the final comparison is constant-time.
 */
export class StaticKeyTable<T extends { readonly sha256: string }> {
  /** Each entry with its digest's bytes, decoded once here rather than on every lookup. */
  private readonly byDigest = new Map<string, { readonly entry: T; readonly bytes: Buffer }>();

  constructor(entries: readonly T[]) {
    for (const entry of entries) this.byDigest.set(entry.sha256, { entry, bytes: Buffer.from(entry.sha256, 'hex') });
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** The entry of a presented secret, by the secret's digest (computed once per request by the caller). */
  find(digest: string): T | undefined {
    const found = this.byDigest.get(digest);
    if (!found) return undefined;
    const same = timingSafeEqual(found.bytes, Buffer.from(digest, 'hex'));
    return same ? found.entry : undefined;
  }
}

/** A new API key secret: 24 random bytes, base64url, behind a `tg-` prefix (what keygen and the admin API hand out). */
export function newKeySecret(): string {
  return `tg-${randomBytes(24).toString('base64url')}`;
}
