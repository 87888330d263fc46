import type { AdminKeyRecord, StoredAdminKey } from '../store/index.js';
import { AuthFailure } from './failure.js';

interface Entry {
  readonly record: AdminKeyRecord;
  readonly validUntilMs: number | null;
}

/**
 * Admin keys made at runtime, in memory by secret digest (as RuntimeKeys): an admin request
 * is a map probe, never a database call. Kept in step with the store by syncAdminKeys.
 */
export class RuntimeAdminKeys {
  private byDigest = new Map<string, Entry>();
  private byId = new Map<string, { record: AdminKeyRecord; digests: readonly string[] }>();

  replaceAll(stored: readonly StoredAdminKey[]): void {
    this.byDigest = new Map();
    this.byId = new Map();
    for (const key of stored) this.apply(key.record.id, key);
  }

  apply(id: string, stored: StoredAdminKey | undefined): void {
    for (const digest of this.byId.get(id)?.digests ?? []) this.byDigest.delete(digest);
    this.byId.delete(id);
    if (!stored) return;
    for (const secret of stored.secrets) {
      this.byDigest.set(secret.sha256, { record: stored.record, validUntilMs: secret.validUntil === null ? null : Date.parse(secret.validUntil) });
    }
    this.byId.set(id, { record: stored.record, digests: stored.secrets.map((s) => s.sha256) });
  }

  records(): AdminKeyRecord[] {
    return [...this.byId.values()].map((entry) => entry.record).filter((record) => record.revokedAt === null);
  }

  record(id: string): AdminKeyRecord | undefined {
    const record = this.byId.get(id)?.record;
    return record?.revokedAt === null ? record : undefined;
  }

  /** The admin key of a presented secret's digest; a revoked, disabled or expired one is a 401 saying which. */
  authenticate(digest: string, now: number): AdminKeyRecord | undefined {
    const entry = this.byDigest.get(digest);
    if (!entry || (entry.validUntilMs !== null && now >= entry.validUntilMs)) return undefined;
    const { record } = entry;
    if (record.revokedAt !== null) throw new AuthFailure('revoked', 'This admin key has been revoked.');
    if (record.disabled) throw new AuthFailure('disabled', 'This admin key is disabled.');
    if (record.expiresAt !== null && now >= Date.parse(record.expiresAt)) throw new AuthFailure('expired', `This admin key expired at ${record.expiresAt}.`);
    return record;
  }
}
