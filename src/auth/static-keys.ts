import { timingSafeEqual } from 'node:crypto';

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
