import { createHash } from 'node:crypto';

/** The SHA-256 hex digest of a plain key: what the config and the store hold. */
export const digest = (key: string): string => createHash('sha256').update(key).digest('hex');

/** Test credentials: the plain keys clients send, and their digests for the config. */
export const KEYS = {
  teamA: 'tg-test-team-a-0123456789abcdef',
  teamAProdOnly: 'tg-test-team-a-prod-only-7654321',
  teamB: 'tg-test-team-b-fedcba9876543210',
  admin: 'tg-test-admin-5f5f5f5f5f5f5f5f5f',
} as const;

export const KEY_ENTRIES = [
  { id: 'team-a-bot', sha256: digest(KEYS.teamA), team: 'team-a', projects: ['*'] },
  { id: 'team-a-prod', sha256: digest(KEYS.teamAProdOnly), team: 'team-a', projects: ['prod'], defaultProject: 'prod' },
  { id: 'team-b-bot', sha256: digest(KEYS.teamB), team: 'team-b', projects: ['*'] },
];

export const ADMIN_ENTRIES = [{ id: 'ops', sha256: digest(KEYS.admin) }];

export const bearer = (key: string): string => `Bearer ${key}`;
