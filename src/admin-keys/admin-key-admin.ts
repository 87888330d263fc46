import { randomBytes } from 'node:crypto';
import type { RuntimeAdminKeys } from '../auth/index.js';
import { newKeySecret, sha256Hex } from '../key-secrets.js';
import { adminKeyTeamProblem, type AdminKeyConfig } from '../config/index.js';
import { errors, type GatewayError } from '../errors.js';
import { DatabaseUnavailableError, StoreMirror, type AdminKeyPatch, type AdminKeyRecord, type AdminRoleName, type StoreHandle } from '../store/index.js';

/** An admin key as `/admin/admin-keys` shows it (SPEC 16): never its secret or a digest. */
export interface AdminKeyView {
  readonly id: string;
  readonly role: AdminRoleName;
  readonly team: string | null;
  readonly description: string | null;
  readonly createdAt: string | null;
  readonly expiresAt: string | null;
  readonly disabled: boolean;
  readonly source: 'api' | 'config';
}

export interface NewAdminKey {
  readonly role: AdminRoleName;
  readonly team?: string | undefined;
  readonly description?: string | null | undefined;
  readonly expiresAt?: string | null | undefined;
}

const viewOfRecord = ({ id, role, team, description, createdAt, expiresAt, disabled }: AdminKeyRecord): AdminKeyView => ({
  id, role, team, description, createdAt, expiresAt, disabled, source: 'api',
});
const viewOfConfig = (key: AdminKeyConfig): AdminKeyView => ({
  id: key.id, role: key.role, team: key.team ?? null, description: null, createdAt: null, expiresAt: null, disabled: false, source: 'config',
});

const notFound = (id: string): GatewayError => errors.adminKeyNotFound(id);

/**
 * A change's role and team as they leave the key (SPEC 16): a team-admin names its team, the
 * other roles none. A role changed away from team-admin drops the team; a team given alone
 * applies to the key's current role, so naming a team for a viewer is the same 400 as in one body.
 */
function withRoleAndTeam(current: AdminKeyRecord, patch: AdminKeyPatch): AdminKeyPatch {
  const role = patch.role ?? current.role;
  const team = patch.team !== undefined ? patch.team : role === 'team-admin' ? current.team : null;
  const problem = adminKeyTeamProblem(role, team);
  if (problem !== undefined) throw errors.invalidRequest('team', `team: ${problem}`);
  return team === current.team ? patch : { ...patch, team };
}

export function syncAdminKeys(handle: StoreHandle, keys: RuntimeAdminKeys, options: { refreshIntervalMs: number; onError: (err: unknown) => void }): StoreMirror {
  return new StoreMirror(handle, {
    refreshIntervalMs: options.refreshIntervalMs,
    onError: options.onError,
    loadAll: async (store) => keys.replaceAll(await store.loadAdminKeys()),
    loadOne: async (store, id) => keys.apply(id, await store.loadAdminKey(id)),
    idOf: (change) => (change.kind === 'admin_key' ? change.id : undefined),
  });
}

/** `/admin/admin-keys` (SPEC 16): as KeyAdmin for API keys — secrets shown once, digests stored, config keys read-only. */
export class AdminKeyAdmin {
  constructor(
    private readonly handle: StoreHandle,
    private readonly keys: RuntimeAdminKeys,
    private readonly sync: StoreMirror,
    private readonly configKeys: () => readonly AdminKeyConfig[],
  ) {}

  list(): AdminKeyView[] {
    return [...this.configKeys().map(viewOfConfig), ...this.keys.records().map(viewOfRecord)];
  }

  get(id: string): AdminKeyView {
    const config = this.configKeys().find((key) => key.id === id);
    if (config) return viewOfConfig(config);
    const record = this.keys.record(id);
    if (!record) throw notFound(id);
    return viewOfRecord(record);
  }

  async create(input: NewAdminKey): Promise<AdminKeyView & { key: string }> {
    const secret = newKeySecret();
    const record: AdminKeyRecord = {
      id: `adm-${randomBytes(8).toString('hex')}`,
      role: input.role,
      team: input.team ?? null,
      description: input.description ?? null,
      createdAt: new Date().toISOString(),
      expiresAt: input.expiresAt ?? null,
      disabled: false,
      revokedAt: null,
    };
    const created = await this.write(() => this.handle.require().createAdminKey(record, sha256Hex(secret)));
    await this.sync.loadOne(created.id);
    return { ...viewOfRecord(created), key: secret };
  }

  /** Role and team are checked as the change leaves them (read from the store, not this instance's copy). */
  async update(id: string, patch: AdminKeyPatch): Promise<AdminKeyView> {
    this.refuseConfigKey(id);
    const current = await this.write(() => this.handle.require().loadAdminKey(id));
    if (!current || current.record.revokedAt !== null) throw notFound(id);
    const changes = withRoleAndTeam(current.record, patch);
    const updated = await this.write(() => this.handle.require().updateAdminKey(id, changes));
    if (!updated) throw notFound(id);
    await this.sync.loadOne(id);
    return viewOfRecord(updated);
  }

  async rotate(id: string, overlapSeconds: number): Promise<AdminKeyView & { key: string }> {
    this.refuseConfigKey(id);
    const secret = newKeySecret();
    const oldValidUntil = overlapSeconds > 0 ? new Date(Date.now() + overlapSeconds * 1000).toISOString() : null;
    const rotated = await this.write(() => this.handle.require().rotateAdminKey(id, sha256Hex(secret), oldValidUntil));
    if (!rotated) throw notFound(id);
    await this.sync.loadOne(id);
    return { ...viewOfRecord(rotated), key: secret };
  }

  async revoke(id: string): Promise<void> {
    this.refuseConfigKey(id);
    if (!(await this.write(() => this.handle.require().revokeAdminKey(id)))) throw notFound(id);
    await this.sync.loadOne(id);
  }

  private refuseConfigKey(id: string): void {
    if (this.configKeys().some((key) => key.id === id)) {
      throw errors.readOnlyAdminKey(id);
    }
  }

  private async write<T>(operation: () => Promise<T>): Promise<T> {
    try {
      return await operation();
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) {
        throw errors.databaseUnavailableForChange();
      }
      throw err;
    }
  }
}
