import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** SHA-256 hex digest of a presented key: the only form in which keys are stored or compared. */
export function sha256Hex(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/**
 * Looks up keys by digest. The lookup is a hash-table probe on the digest of the presented
 * secret, which leaks nothing about the stored secrets; the final comparison is constant-time.
 */
export class StaticKeyTable<T extends { readonly sha256: string }> {
  private readonly byDigest = new Map<string, T>();

  constructor(entries: readonly T[]) {
    for (const entry of entries) this.byDigest.set(entry.sha256, entry);
  }

  get size(): number {
    return this.byDigest.size;
  }

  /** The entry of a presented secret, by the secret's digest (computed once per request by the caller). */
  find(digest: string): T | undefined {
    const entry = this.byDigest.get(digest);
    if (!entry) return undefined;
    const same = timingSafeEqual(Buffer.from(entry.sha256, 'hex'), Buffer.from(digest, 'hex'));
    return same ? entry : undefined;
  }
}

/** A new API key secret: 24 random bytes, base64url, behind a `tg-` prefix (what keygen and the admin API hand out). */
export function newKeySecret(): string {
  return `tg-${randomBytes(24).toString('base64url')}`;
}
