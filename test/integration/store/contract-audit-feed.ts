import { describe, expect, it } from 'vitest';
import { DatabaseUnavailableError, KeyIdTakenError, type AuditEntry } from '../../../src/store/index.js';
import type { ContractContext } from './durable-store.contract.js';
import { ChangeRecorder, digest, keyRecord, rejection, resource } from './store-fixtures.js';

const audit = (at: string, overrides: Partial<AuditEntry> = {}): AuditEntry => ({
  at,
  actor: 'admin-1',
  action: 'key.create',
  target: 'key-1',
  result: 'ok',
  requestId: `req-${at}`,
  ...overrides,
});

export function describeAuditAndFeedContract({ store, openAnother }: ContractContext): void {
  describe('audit log', () => {
    it('lists the entries of the inclusive UTC days in time order', async () => {
      const entries = [
        audit('2025-03-03T00:00:00.000Z'),
        audit('2025-03-02T23:59:59.999Z'),
        audit('2025-03-01T00:00:00.000Z'),
        audit('2025-02-28T23:59:59.999Z'),
      ];
      for (const entry of entries) await store().appendAudit(entry);
      expect(await store().listAudit({ from: '2025-03-01', to: '2025-03-02' })).toEqual([entries[2], entries[1]]);
      expect(await store().listAudit({ from: '2025-03-03', to: '2025-03-03' })).toEqual([entries[0]]);
      expect(await store().listAudit({ from: '2025-03-04', to: '2025-03-01' })).toEqual([]);
    });

    it('keeps entries of the same instant in the order they were written, and filters by actor and action', async () => {
      const at = '2025-03-01T08:00:00.000Z';
      const entries = [
        audit(at, { requestId: 'r1', action: 'key.rotate' }),
        audit(at, { requestId: 'r2', actor: 'admin-2', action: 'resource.assign', target: 'model/m1' }),
        audit(at, { requestId: 'r3', action: 'config.reload', target: 'config', result: 'invalid_config' }),
      ];
      for (const entry of entries) await store().appendAudit(entry);
      expect(await store().listAudit({ from: '2025-03-01', to: '2025-03-01' })).toEqual(entries);
      expect(await store().listAudit({ from: '2025-03-01', to: '2025-03-01', actor: 'admin-1' })).toEqual([entries[0], entries[2]]);
      expect(await store().listAudit({ from: '2025-03-01', to: '2025-03-01', actor: 'admin-1', action: 'config.reload' })).toEqual([entries[2]]);
    });

    it('refuses a day that is not YYYY-MM-DD', async () => {
      expect(await rejection(store().listAudit({ from: '2025-02-30', to: '2025-03-01' }))).toBeInstanceOf(RangeError);
    });
  });

  describe('change feed (one instance)', () => {
    it('announces each committed key and resource write once, and nothing for writes that changed nothing', async () => {
      const recorder = new ChangeRecorder(store());
      await store().createKey(keyRecord(), digest('s1'));
      await rejection(store().createKey(keyRecord(), digest('s2'))).then((e) => expect(e).toBeInstanceOf(KeyIdTakenError));
      await store().updateKey('key-1', { disabled: true });
      await store().updateKey('nope', { disabled: true });
      await store().rotateKey('key-1', digest('s3'), null);
      await store().revokeKey('key-1');
      await store().revokeKey('key-1');
      await store().recordResource(resource());
      await store().recordResource(resource({ team: 'team-b' }));
      await store().assignResource(resource({ kind: 'training_job', id: 'job-1', artifact: null }));
      await store().releaseResource('model', 'model-1');
      await store().releaseResource('model', 'model-1');
      await store().appendAudit(audit('2025-03-01T00:00:00.000Z'));
      expect(recorder.changes).toEqual([
        { kind: 'key', id: 'key-1' },
        { kind: 'key', id: 'key-1' },
        { kind: 'key', id: 'key-1' },
        { kind: 'key', id: 'key-1' },
        { kind: 'resource', id: 'model-1', resourceKind: 'model' },
        { kind: 'resource', id: 'job-1', resourceKind: 'training_job' },
        { kind: 'resource', id: 'model-1', resourceKind: 'model' },
      ]);
    });

    it('keeps telling other listeners when one throws, and stops after unsubscribe', async () => {
      store().onChange(() => {
        throw new Error('listener bug');
      });
      const recorder = new ChangeRecorder(store());
      await store().recordResource(resource());
      recorder.unsubscribe();
      await store().releaseResource('model', 'model-1');
      expect(recorder.changes).toEqual([{ kind: 'resource', id: 'model-1', resourceKind: 'model' }]);
    });
  });

  describe('lifecycle', () => {
    it('answers ping, closes idempotently, and refuses calls once closed', async () => {
      const another = await openAnother();
      expect(await another.ping()).toBe(true);
      await another.close();
      await another.close();
      expect(await another.ping()).toBe(false);
      const refused = await rejection(another.getKey('key-1'));
      expect(refused).toBeInstanceOf(DatabaseUnavailableError);
      expect(refused.message).toBe('the store is closed');
    });

    it('keeps everything across a restart, without migrating again', async () => {
      await store().createKey(keyRecord(), digest('s1'));
      await store().recordResource(resource());
      await store().appendAudit(audit('2025-03-01T00:00:00.000Z'));
      await store().close();
      const reopened = await openAnother();
      expect(reopened.appliedMigrations).toEqual([]);
      expect(await reopened.loadKey('key-1')).toEqual({ record: keyRecord(), secrets: [{ sha256: digest('s1'), validUntil: null }] });
      expect(await reopened.getResource('model', 'model-1')).toEqual(resource());
      expect(await reopened.listAudit({ from: '2025-03-01', to: '2025-03-01' })).toEqual([audit('2025-03-01T00:00:00.000Z')]);
    });
  });
}
