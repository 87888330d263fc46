import { afterEach, describe, expect, it, vi } from 'vitest';
import { KeyIdTakenError, SecretDigestTakenError } from '../../../src/store/index.js';
import type { ContractContext } from './durable-store.contract.js';
import { digest, keyRecord, rejection } from './store-fixtures.js';

export function describeKeyContract({ store }: ContractContext): void {
  describe('API keys', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('creates a key and answers the same record from getKey, listKeys and loadKey', async () => {
      const record = keyRecord({ expiresAt: '2026-01-01T00:00:00.000Z' });
      expect(await store().createKey(record, digest('s1'))).toEqual(record);
      expect(await store().getKey('key-1')).toEqual(record);
      expect(await store().listKeys()).toEqual([record]);
      expect(await store().loadKey('key-1')).toEqual({ record, secrets: [{ sha256: digest('s1'), validUntil: null }] });
      expect(await store().getKey('nope')).toBeUndefined();
      expect(await store().loadKey('nope')).toBeUndefined();
    });

    it('normalises instants to ISO UTC with milliseconds', async () => {
      const created = await store().createKey(keyRecord({ createdAt: '2025-03-01T12:00:00+02:00', expiresAt: '2025-06-01T00:00:00Z' }), digest('s1'));
      expect(created.createdAt).toBe('2025-03-01T10:00:00.000Z');
      expect(created.expiresAt).toBe('2025-06-01T00:00:00.000Z');
    });

    it('refuses a taken id with KeyIdTakenError, also once the key is revoked', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      const taken = await rejection(store().createKey(keyRecord({ team: 'team-b' }), digest('s2')));
      expect(taken).toBeInstanceOf(KeyIdTakenError);
      expect(taken.message).toBe('key id "key-1" is taken (in use or revoked)');
      expect(await store().revokeKey('key-1')).toBe(true);
      expect(await rejection(store().createKey(keyRecord(), digest('s3')))).toBeInstanceOf(KeyIdTakenError);
      const stored = await store().loadKey('key-1');
      expect(stored?.secrets).toEqual([{ sha256: digest('s1'), validUntil: null }]);
      expect(stored?.record.team).toBe('team-a');
      expect(stored?.record.revokedAt).not.toBeNull();
    });

    it('refuses a digest another key holds, and keeps nothing of the new key', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      expect(await rejection(store().createKey(keyRecord({ id: 'key-2' }), digest('s1')))).toBeInstanceOf(SecretDigestTakenError);
      expect(await store().getKey('key-2')).toBeUndefined();
    });

    it('lists keys by createdAt then id, for one team or all', async () => {
      await store().createKey(keyRecord({ id: 'k-b', createdAt: '2025-03-02T00:00:00.000Z' }), digest('1'));
      await store().createKey(keyRecord({ id: 'k-a', createdAt: '2025-03-02T00:00:00.000Z', team: 'team-b' }), digest('2'));
      await store().createKey(keyRecord({ id: 'k-z', createdAt: '2025-03-01T00:00:00.000Z' }), digest('3'));
      expect((await store().listKeys()).map((k) => k.id)).toEqual(['k-z', 'k-a', 'k-b']);
      expect((await store().listKeys('team-a')).map((k) => k.id)).toEqual(['k-z', 'k-b']);
      expect(await store().listKeys('team-c')).toEqual([]);
    });

    it('patches only the given fields; unknown and revoked keys answer undefined', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      const patched = await store().updateKey('key-1', { projects: ['x'], defaultProject: 'x', limits: { tpm: 1000 }, description: null, expiresAt: '2025-12-31T23:59:59.999Z', disabled: true });
      expect(patched).toEqual(keyRecord({ projects: ['x'], defaultProject: 'x', limits: { tpm: 1000 }, description: null, expiresAt: '2025-12-31T23:59:59.999Z', disabled: true }));
      expect(await store().updateKey('key-1', { disabled: false })).toEqual({ ...patched, disabled: false });
      expect(await store().updateKey('key-1', {})).toEqual({ ...patched, disabled: false });
      expect(await store().updateKey('nope', { disabled: true })).toBeUndefined();
      await store().revokeKey('key-1');
      expect(await store().updateKey('key-1', { disabled: true })).toBeUndefined();
      expect(await store().updateKey('key-1', {})).toBeUndefined();
    });

    it('stores a key\'s model patterns (SPEC 21), and null again for none of its own', async () => {
      await store().createKey(keyRecord({ models: ['@base', 'OpenPipe/*'] }), digest('m1'));
      expect((await store().getKey('key-1'))?.models).toEqual(['@base', 'OpenPipe/*']);
      expect((await store().updateKey('key-1', { models: [] }))?.models).toEqual([]);
      expect((await store().updateKey('key-1', { models: null }))?.models).toBeNull();
      expect((await store().loadKey('key-1'))?.record.models).toBeNull();
    });

    it('keeps the previous secret through the rotation overlap, then only the current one', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      const until = new Date(Date.now() + 3_600_000).toISOString();
      expect(await store().rotateKey('key-1', digest('s2'), until)).toEqual(keyRecord());
      expect((await store().loadKey('key-1'))?.secrets).toEqual([
        { sha256: digest('s2'), validUntil: null },
        { sha256: digest('s1'), validUntil: until },
      ]);
      // A second rotation with no overlap drops s2 at once; s1 keeps its own overlap.
      await store().rotateKey('key-1', digest('s3'), null);
      expect((await store().loadKey('key-1'))?.secrets).toEqual([
        { sha256: digest('s3'), validUntil: null },
        { sha256: digest('s1'), validUntil: until },
      ]);
      // An overlap already over counts as none.
      await store().rotateKey('key-1', digest('s4'), '2000-01-01T00:00:00.000Z');
      expect((await store().loadKey('key-1'))?.secrets.map((s) => s.sha256)).toEqual([digest('s4'), digest('s1')]);
    });

    it('stops answering a rotated secret once its overlap has passed', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      const until = new Date(Date.now() + 60_000).toISOString();
      await store().rotateKey('key-1', digest('s2'), until);
      vi.useFakeTimers({ toFake: ['Date'], now: Date.parse(until) + 1 });
      expect((await store().loadKeys())[0]?.secrets).toEqual([{ sha256: digest('s2'), validUntil: null }]);
      // The next rotation deletes it for good, so its digest is free again.
      await store().rotateKey('key-1', digest('s3'), null);
      await store().createKey(keyRecord({ id: 'key-2' }), digest('s1'));
      expect((await store().loadKey('key-2'))?.secrets).toEqual([{ sha256: digest('s1'), validUntil: null }]);
    });

    it('does not rotate an unknown or revoked key, nor to a taken digest (leaving the secrets as they were)', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      await store().createKey(keyRecord({ id: 'key-2' }), digest('other'));
      expect(await store().rotateKey('nope', digest('s2'), null)).toBeUndefined();
      expect(await rejection(store().rotateKey('key-1', digest('other'), null))).toBeInstanceOf(SecretDigestTakenError);
      expect((await store().loadKey('key-1'))?.secrets).toEqual([{ sha256: digest('s1'), validUntil: null }]);
      await store().revokeKey('key-1');
      expect(await store().rotateKey('key-1', digest('s2'), null)).toBeUndefined();
      expect((await store().loadKey('key-1'))?.secrets).toEqual([{ sha256: digest('s1'), validUntil: null }]);
    });

    it('revokes once for good: the record says when, its secrets stay its own (never another key\'s)', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      await store().rotateKey('key-1', digest('s2'), new Date(Date.now() + 60_000).toISOString());
      const before = Date.now();
      expect(await store().revokeKey('key-1')).toBe(true);
      expect(await store().revokeKey('key-1')).toBe(false);
      expect(await store().revokeKey('nope')).toBe(false);
      const revoked = await store().getKey('key-1');
      expect(Date.parse(revoked?.revokedAt ?? '')).toBeGreaterThanOrEqual(before - 5);
      expect(revoked?.revokedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The digests still name the revoked key (a client presenting one is told so) and stay taken.
      expect((await store().loadKey('key-1'))?.secrets.map((s) => s.sha256)).toEqual([digest('s2'), digest('s1')]);
      expect(await rejection(store().createKey(keyRecord({ id: 'key-2' }), digest('s1')))).toBeInstanceOf(SecretDigestTakenError);
    });

    it('loads every key with its secrets, revoked ones included, in createdAt order', async () => {
      await store().createKey(keyRecord({ id: 'k2', createdAt: '2025-03-02T00:00:00.000Z' }), digest('2'));
      await store().createKey(keyRecord({ id: 'k1', createdAt: '2025-03-01T00:00:00.000Z' }), digest('1'));
      await store().createKey(keyRecord({ id: 'k3', createdAt: '2025-03-03T00:00:00.000Z' }), digest('3'));
      await store().revokeKey('k3');
      const loaded = await store().loadKeys();
      expect(loaded.map((k) => [k.record.id, k.secrets.map((s) => s.sha256), k.record.revokedAt !== null])).toEqual([
        ['k1', [digest('1')], false],
        ['k2', [digest('2')], false],
        ['k3', [digest('3')], true],
      ]);
    });
  });
}
