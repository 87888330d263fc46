import { describe, expect, it } from 'vitest';
import { KeyIdTakenError, TeamIdTakenError, type AdminKeyRecord, type TeamRecord } from '../../../src/store/index.js';
import type { ContractContext } from './durable-store.contract.js';
import { ChangeRecorder, digest, keyRecord, rejection } from './store-fixtures.js';

const team = (overrides: Partial<TeamRecord> = {}): TeamRecord => ({
  id: 'team-a',
  description: 'Search',
  limits: { rpm: 30, costPerMonth: 2000 },
  models: null,
  disabled: false,
  createdAt: '2025-03-01T10:00:00.000Z',
  ...overrides,
});

const adminKey = (overrides: Partial<AdminKeyRecord> = {}): AdminKeyRecord => ({
  id: 'adm-1',
  role: 'team-admin',
  team: 'team-a',
  description: 'team lead',
  createdAt: '2025-03-01T10:00:00.000Z',
  expiresAt: null,
  disabled: false,
  revokedAt: null,
  ...overrides,
});

/** SPEC 16: team records and runtime admin keys, the same on both databases. */
export function describeTeamContract({ store }: ContractContext): void {
  describe('teams', () => {
    it('stores a team\'s model patterns (SPEC 21), and null again for none of its own', async () => {
      await store().createTeam(team({ models: ['@base'] }));
      expect((await store().getTeam('team-a'))?.models).toEqual(['@base']);
      expect((await store().updateTeam('team-a', { models: null }))?.models).toBeNull();
      expect((await store().updateTeam('team-a', { models: ['x/*'] }))?.models).toEqual(['x/*']);
    });

    it('creates, reads, lists, patches and announces teams; a taken id is refused', async () => {
      const changes = new ChangeRecorder(store());
      expect(await store().createTeam(team())).toEqual(team());
      await store().createTeam(team({ id: 'team-0', limits: {} }));
      expect(await rejection(store().createTeam(team()))).toBeInstanceOf(TeamIdTakenError);
      expect(await store().getTeam('team-a')).toEqual(team());
      expect((await store().listTeams()).map((t) => t.id)).toEqual(['team-0', 'team-a']);
      expect(await store().updateTeam('team-a', { disabled: true, limits: { rpm: 5 } })).toEqual(team({ disabled: true, limits: { rpm: 5 } }));
      expect(await store().updateTeam('team-x', { disabled: true })).toBeUndefined();
      await changes.waitFor(3);
      expect(changes.changes).toEqual([
        { kind: 'team', id: 'team-a' },
        { kind: 'team', id: 'team-0' },
        { kind: 'team', id: 'team-a' },
      ]);
    });

    it('refuses to delete a team while a live key names it', async () => {
      await store().createTeam(team());
      await store().createKey(keyRecord({ team: 'team-a' }), digest('s1'));
      expect(await store().deleteTeam('team-a')).toBe('in_use');
      await store().revokeKey('key-1');
      expect(await store().deleteTeam('team-a')).toBe('deleted');
      expect(await store().deleteTeam('team-a')).toBe('not_found');
      expect(await store().getTeam('team-a')).toBeUndefined();
    });
  });

  describe('admin keys', () => {
    it('stores digests, rotates, revokes and announces; an id is never reused', async () => {
      const changes = new ChangeRecorder(store());
      expect(await store().createAdminKey(adminKey(), digest('a1'))).toEqual(adminKey());
      expect(await rejection(store().createAdminKey(adminKey(), digest('a2')))).toBeInstanceOf(KeyIdTakenError);
      expect(await store().updateAdminKey('adm-1', { role: 'viewer', team: null })).toEqual(adminKey({ role: 'viewer', team: null }));
      await store().rotateAdminKey('adm-1', digest('a3'), null);
      expect(await store().loadAdminKey('adm-1')).toEqual({ record: adminKey({ role: 'viewer', team: null }), secrets: [{ sha256: digest('a3'), validUntil: null }] });
      expect(await store().revokeAdminKey('adm-1')).toBe(true);
      expect(await store().revokeAdminKey('adm-1')).toBe(false);
      expect((await store().loadAdminKeys())[0]!.record.revokedAt).not.toBeNull();
      expect(await store().updateAdminKey('adm-1', { disabled: true })).toBeUndefined();
      await changes.waitFor(4);
      expect(changes.changes.every((c) => c.kind === 'admin_key')).toBe(true);
    });
  });

  describe('audit actor role', () => {
    it('keeps the role of the actor', async () => {
      const entry = { at: '2025-03-01T08:00:00.000Z', actor: 'lead', actorRole: 'team-admin', action: 'key.create', target: 'key-1', result: 'ok', requestId: 'r1' };
      await store().appendAudit(entry);
      expect(await store().listAudit({ from: '2025-03-01', to: '2025-03-01' })).toEqual([entry]);
    });
  });
}
