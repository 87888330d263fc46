import { randomBytes } from 'node:crypto';
import type { StaticKeyConfig } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';
import type { LimitSet } from '../limit-kinds/index.js';
import { defaultProjectOf, defaultProjectRefusal, mayUseProject } from '../projects/index.js';
import { DatabaseUnavailableError, type ApiKeyRecord, type KeyPatch, type StoreHandle } from '../store/index.js';
import type { KeySync } from './key-sync.js';
import { storedDefaultProject, type RuntimeKeys } from '../auth/index.js';
import { newKeySecret, sha256Hex } from '../key-secrets.js';

/** A key as the admin API shows it (SPEC 12.1): never its secret or a digest. */
export interface KeyView {
  readonly id: string;
  readonly team: string;
  readonly projects: readonly string[];
  readonly defaultProject: string;
  readonly limits: LimitSet;
  /** Its own model patterns (SPEC 21); null: none of its own. */
  readonly models: readonly string[] | null;
  readonly description: string | null;
  readonly createdAt: string | null;
  readonly expiresAt: string | null;
  readonly disabled: boolean;
  /** `api`: made through the admin API; `config`: from auth.keys (read-only here). */
  readonly source: 'api' | 'config';
}

export interface NewKey {
  readonly team: string;
  readonly projects?: readonly string[];
  readonly defaultProject?: string;
  readonly limits?: LimitSet;
  readonly models?: readonly string[] | null;
  readonly expiresAt?: string | null;
  readonly description?: string | null;
}

export type KeyChanges = KeyPatch & { readonly limits?: LimitSet };

/** A key record with the secret that was just made for it: the only time a secret is shown. */
export type KeyWithSecret = KeyView & { readonly key: string };

const viewOfRecord = (record: ApiKeyRecord): KeyView => ({
  id: record.id,
  team: record.team,
  projects: record.projects,
  defaultProject: storedDefaultProject(record),
  limits: record.limits as LimitSet,
  models: record.models ?? null,
  description: record.description,
  createdAt: record.createdAt,
  expiresAt: record.expiresAt,
  disabled: record.disabled,
  source: 'api',
});

const viewOfConfig = (key: StaticKeyConfig): KeyView => ({
  id: key.id,
  team: key.team,
  projects: key.projects,
  defaultProject: key.defaultProject,
  limits: key.limits,
  models: key.models ?? null,
  description: null,
  createdAt: null,
  expiresAt: null,
  disabled: false,
  source: 'config',
});

const notFound = (id: string): GatewayError => errors.keyNotFound(id);

/** SPEC 6.2: a key's defaultProject is one of its projects; anything else is the admin API's 400. */
const defaultProjectRefused = (projects: readonly string[], named: string, remedy: string): GatewayError =>
  errors.defaultProjectRefused(defaultProjectRefusal(projects, named, remedy));

/** Database errors an admin call answers with: 503 when the database is away, the rest passed on. */
function asAdminError(err: unknown): unknown {
  if (err instanceof DatabaseUnavailableError) {
    return errors.databaseUnavailableForChange();
  }
  return err;
}

/**
 * Keys at runtime (SPEC 12.1). Reads are served from this instance's memory (config keys and
 * the runtime keys the store announced), so they work while the database is away; writes go to
 * the durable store and are applied here before the call answers (by the one load the store's
 * announcement of the write starts), and on every other instance when the change is announced. Secrets are made here, shown once, and stored as SHA-256 digests only.
 */
export class KeyAdmin {
  constructor(
    private readonly handle: StoreHandle,
    private readonly keys: RuntimeKeys,
    private readonly sync: KeySync,
    /** The config keys as the current configuration has them (reloads change them). */
    private readonly configKeys: () => readonly StaticKeyConfig[],
  ) {}

  list(team?: string): KeyView[] {
    const views = [...this.configKeys().map(viewOfConfig), ...this.keys.records().map(viewOfRecord)];
    return team === undefined ? views : views.filter((view) => view.team === team);
  }

  get(id: string): KeyView {
    const config = this.configKeys().find((key) => key.id === id);
    if (config) return viewOfConfig(config);
    const record = this.keys.record(id);
    if (!record) throw notFound(id);
    return viewOfRecord(record);
  }

  async create(input: NewKey): Promise<KeyWithSecret> {
    const projects = [...(input.projects ?? ['*'])];
    const defaultProject = defaultProjectOf(projects, input.defaultProject);
    if (defaultProject === undefined) {
      throw defaultProjectRefused(projects, input.defaultProject!, `name one of them, or leave it out to use ${defaultProjectOf(projects)}`);
    }
    const secret = newKeySecret();
    const record: ApiKeyRecord = {
      id: `key-${randomBytes(8).toString('hex')}`,
      team: input.team,
      projects,
      defaultProject,
      limits: { ...(input.limits ?? {}) },
      models: input.models ? [...input.models] : null,
      description: input.description ?? null,
      createdAt: new Date().toISOString(),
      expiresAt: input.expiresAt ?? null,
      disabled: false,
      revokedAt: null,
    };
    const created = await this.write(() => this.handle.require().createKey(record, sha256Hex(secret)));
    await this.sync.loadAfterWrite(created.id);
    return { ...viewOfRecord(created), key: secret };
  }

  async update(id: string, changes: KeyChanges): Promise<KeyView> {
    this.refuseConfigKey(id);
    if (changes.projects !== undefined || changes.defaultProject !== undefined) await this.refuseStrayDefault(id, changes);
    const updated = await this.write(() => this.handle.require().updateKey(id, changes));
    if (!updated) throw notFound(id);
    await this.sync.loadAfterWrite(id);
    return viewOfRecord(updated);
  }

  /** Makes a new secret; the old one keeps working for `overlapSeconds` (0: not at all). */
  async rotate(id: string, overlapSeconds: number): Promise<KeyWithSecret> {
    this.refuseConfigKey(id);
    const secret = newKeySecret();
    const oldValidUntil = overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000).toISOString() : null;
    const rotated = await this.write(() => this.handle.require().rotateKey(id, sha256Hex(secret), oldValidUntil));
    if (!rotated) throw notFound(id);
    await this.sync.loadAfterWrite(id);
    return { ...viewOfRecord(rotated), key: secret };
  }

  async revoke(id: string): Promise<void> {
    this.refuseConfigKey(id);
    const revoked = await this.write(() => this.handle.require().revokeKey(id));
    if (!revoked) throw notFound(id);
    await this.sync.loadAfterWrite(id);
  }

  /** Projects and default project as the change would leave them must agree (read from the store, not this instance's copy). */
  private async refuseStrayDefault(id: string, changes: KeyChanges): Promise<void> {
    const current = await this.write(() => this.handle.require().getKey(id));
    if (!current || current.revokedAt !== null) throw notFound(id);
    const projects = changes.projects ?? current.projects;
    const named = changes.defaultProject ?? storedDefaultProject(current);
    if (!mayUseProject(projects, named)) throw defaultProjectRefused(projects, named, 'name one of them in the same change');
  }

  private refuseConfigKey(id: string): void {
    if (this.configKeys().some((key) => key.id === id)) {
      throw errors.readOnlyKey(id);
    }
  }

  private async write<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      throw asAdminError(err);
    }
  }
}
