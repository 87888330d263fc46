import type { ApiKeyRecord, StoredKey } from '../store/index.js';
import type { LimitSet } from '../limit-kinds/index.js';
import { defaultProjectOf } from '../projects/index.js';
import { AuthFailure } from './failure.js';
import type { Principal } from './principal.js';

/** A key made through the admin API, as this instance holds it. */
export interface RuntimeKey {
  readonly record: ApiKeyRecord;
  /** A new object whenever the key changes: limit plans are cached per Principal object. */
  readonly principal: Principal;
  readonly expiresAtMs: number | null;
}

interface SecretEntry {
  readonly key: RuntimeKey;
  /** Epoch ms after which this (rotated-out) secret stops working; null for the current one. */
  readonly validUntilMs: number | null;
}

const toMs = (iso: string | null): number | null => (iso === null ? null : Date.parse(iso));

/**
 * The default project a stored key runs as. Keys stored before SPEC 6.2 said so may hold one
 * outside their projects (`default` for a `["prod"]` key): those get the rule of a key that
 * names none, so the header left out never reaches a project the key could not name.
 */
export function storedDefaultProject(record: Pick<ApiKeyRecord, 'projects' | 'defaultProject'>): string {
  return defaultProjectOf(record.projects, record.defaultProject) ?? defaultProjectOf(record.projects) ?? record.defaultProject;
}

function principalOf(record: ApiKeyRecord): Principal {
  return {
    kind: 'key',
    id: record.id,
    team: record.team,
    projects: new Set(record.projects),
    defaultProject: storedDefaultProject(record),
    limits: record.limits as LimitSet,
    models: record.models,
  };
}

/**
 * The keys of the admin API, in memory: every request's lookup is a map probe by the digest of
 * the presented secret, never a database round trip. The durable store fills it (a full load,
 * then one key at a time as changes are announced); a key's secrets, record and principal
 * change together.
 */
export class RuntimeKeys {
  private byDigest = new Map<string, SecretEntry>();
  private byId = new Map<string, { key: RuntimeKey; digests: readonly string[] }>();

  /** Replaces everything with a full load. */
  replaceAll(stored: readonly StoredKey[]): void {
    this.byDigest = new Map();
    this.byId = new Map();
    for (const key of stored) this.apply(key.record.id, key);
  }

  /** Puts one key as the store now has it (undefined: it no longer exists). */
  apply(id: string, stored: StoredKey | undefined): void {
    const previous = this.byId.get(id);
    if (previous) for (const digest of previous.digests) this.byDigest.delete(digest);
    this.byId.delete(id);
    if (!stored) return;
    const key: RuntimeKey = { record: stored.record, principal: principalOf(stored.record), expiresAtMs: toMs(stored.record.expiresAt) };
    for (const secret of stored.secrets) this.byDigest.set(secret.sha256, { key, validUntilMs: toMs(secret.validUntil) });
    this.byId.set(id, { key, digests: stored.secrets.map((s) => s.sha256) });
  }

  /** Live keys (not revoked), for the admin API's reads. */
  records(): ApiKeyRecord[] {
    return [...this.byId.values()].map((entry) => entry.key.record).filter((record) => record.revokedAt === null);
  }

  record(id: string): ApiKeyRecord | undefined {
    const record = this.byId.get(id)?.key.record;
    return record?.revokedAt === null ? record : undefined;
  }

  get size(): number {
    return this.byId.size;
  }

  /**
   * The principal of a presented secret's digest, or undefined when no runtime key has it — a
   * secret rotated out whose overlap has ended included (the store forgets it soon after). A key
   * that is revoked, disabled or expired is a 401 that says which.
   */
  authenticate(digest: string, now: number): Principal | undefined {
    const entry = this.byDigest.get(digest);
    if (!entry) return undefined;
    const { key, validUntilMs } = entry;
    if (validUntilMs !== null && now >= validUntilMs) return undefined;
    if (key.record.revokedAt !== null) throw new AuthFailure('revoked', 'This API key has been revoked.');
    if (key.record.disabled) throw new AuthFailure('disabled', 'This API key is disabled.');
    if (key.expiresAtMs !== null && now >= key.expiresAtMs) throw new AuthFailure('expired', `This API key expired at ${key.record.expiresAt}.`);
    return key.principal;
  }
}
