import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import type { AdminKeyView } from '../../../src/admin-keys/index.js';
import { errors } from '../../../src/errors.js';
import { ConsoleSessions } from '../../../src/sessions/index.js';
import { StoreHandle } from '../../../src/store/index.js';
import { tempDatabasePath } from '../../helpers/gateway.js';

const HOUR = 3600 * 1000;
const START = Date.parse('2026-03-01T09:00:00.000Z');
const key = (changes: Partial<AdminKeyView> = {}): AdminKeyView => ({
  id: 'adm-1', role: 'viewer', team: null, description: null, createdAt: null, expiresAt: null, disabled: false, source: 'api', ...changes,
});

/** The session rules that turn on time (SPEC 17), on a real SQLite store with a clock the test moves. */
describe('ConsoleSessions', () => {
  let handle: StoreHandle;
  let now: number;
  let directory: AdminKeyView | undefined;
  let sessions: ConsoleSessions;

  beforeEach(async () => {
    handle = new StoreHandle({ url: '', path: tempDatabasePath() }, { logger: pino({ level: 'silent' }) });
    expect(await handle.open()).toBe(true);
    now = START;
    directory = key();
    sessions = new ConsoleSessions(
      handle,
      {
        get: (id) => {
          if (directory?.id !== id) throw errors.adminKeyNotFound(id);
          return directory;
        },
      },
      () => now,
    );
  });
  afterEach(async () => {
    await handle.close();
  });

  it('lasts 8 hours from sign-in, to the millisecond', async () => {
    const made = await sessions.create({ id: 'adm-1', role: 'viewer', team: null });
    expect(made.expiresAt).toBe('2026-03-01T17:00:00.000Z');
    now = START + 8 * HOUR - 1;
    expect((await sessions.resolve(made.token)).admin).toEqual({ id: 'adm-1', role: 'viewer', team: null });
    now = START + 8 * HOUR;
    await expect(sessions.resolve(made.token)).rejects.toMatchObject({ status: 401, reason: 'session' });
  });

  it('dies when its admin key expires, and takes the key\'s current role and team', async () => {
    const made = await sessions.create({ id: 'adm-1', role: 'viewer', team: null });
    directory = key({ role: 'team-admin', team: 'team-a', expiresAt: new Date(START + HOUR).toISOString() });
    expect((await sessions.resolve(made.token)).admin).toEqual({ id: 'adm-1', role: 'team-admin', team: 'team-a' });
    now = START + HOUR;
    await expect(sessions.resolve(made.token)).rejects.toMatchObject({ status: 401, reason: 'expired', message: 'The admin key of this console session expired at 2026-03-01T10:00:00.000Z.' });
  });

  it('purges expired sessions at the next sign-in, keeps live ones', async () => {
    const old = await sessions.create({ id: 'adm-1', role: 'viewer', team: null });
    now = START + 4 * HOUR;
    const live = await sessions.create({ id: 'adm-1', role: 'viewer', team: null });
    now = START + 9 * HOUR;
    await sessions.create({ id: 'adm-1', role: 'viewer', team: null });
    expect(await handle.require().getSession(old.tokenSha256)).toBeUndefined();
    expect(await handle.require().getSession(live.tokenSha256)).toMatchObject({ adminKeyId: 'adm-1', csrfToken: live.csrfToken });
  });
});
