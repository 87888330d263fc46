import { randomBytes, timingSafeEqual } from 'node:crypto';
import { AuthFailure, type AdminPrincipal } from '../auth/index.js';
import { sha256Hex } from '../key-secrets.js';
import { type AdminKeyAdmin, type AdminKeyView } from '../admin-keys/index.js';
import { errors } from '../errors.js';
import { DatabaseUnavailableError, type ConsoleSessionRecord, type DurableStore, type SessionPerson, type StoreHandle } from '../store/index.js';

/** SPEC 17: a console session lasts 8 hours from sign-in. */
export const SESSION_LIFETIME_SECONDS = 8 * 60 * 60;

/** A live session: who is behind it, as the admin key directory says now. */
export interface LiveSession {
  readonly admin: AdminPrincipal;
  readonly csrfToken: string;
  readonly expiresAt: string;
  /** The digest the session is stored under (its token never is). */
  readonly tokenSha256: string;
  /** Who signed in through the identity provider (SPEC 25); absent for a key's session. */
  readonly person?: SessionPerson;
}

/** A new session: the cookie's token (given to the browser once) and what the session answer says. */
export interface NewSession extends LiveSession {
  readonly token: string;
}

const newToken = (): string => randomBytes(32).toString('base64url');

/**
 * Console sessions (SPEC 17), kept in the durable store (console_sessions, by the digest of the
 * cookie's token) so that every instance sharing the database knows them and a sign-out ends one
 * everywhere. A session names only its admin key: on every request the key is looked up in the
 * admin key directory (config keys and runtime ones, kept within 1 s by their sync), so the
 * key's revocation, disabling, expiry, role or team change applies to its sessions at once.
 */
export class ConsoleSessions {
  constructor(
    private readonly handle: StoreHandle,
    private readonly directory: Pick<AdminKeyAdmin, 'get'>,
    private readonly now: () => number = Date.now,
  ) {}

  /** Signs `admin` in: a new session of 8 hours. */
  create(admin: AdminPrincipal): Promise<NewSession> {
    return this.open(admin, undefined, Number.POSITIVE_INFINITY);
  }

  /**
   * Signs in a person the identity provider vouched for (SPEC 25): their role is the one their
   * groups gave at sign-in, and the session ends at the earlier of 8 hours and `notAfter` (the ID
   * token's expiry, ms since the epoch).
   */
  createForPerson(person: SessionPerson, notAfter: number): Promise<NewSession> {
    return this.open(principalOf(person), person, notAfter);
  }

  private async open(admin: AdminPrincipal, person: SessionPerson | undefined, notAfter: number): Promise<NewSession> {
    const token = newToken();
    const createdAt = this.now();
    const record: ConsoleSessionRecord = {
      tokenSha256: sha256Hex(token),
      adminKeyId: admin.id,
      csrfToken: newToken(),
      createdAt: new Date(createdAt).toISOString(),
      expiresAt: new Date(Math.min(createdAt + SESSION_LIFETIME_SECONDS * 1000, notAfter)).toISOString(),
      ...(person === undefined ? {} : { person }),
    };
    await this.store((store) => store.createSession(record));
    return { token, admin, csrfToken: record.csrfToken, expiresAt: record.expiresAt, tokenSha256: record.tokenSha256, ...(person === undefined ? {} : { person }) };
  }

  /** The session of a cookie token, its admin key checked now; a 401 AuthFailure saying why when there is none. */
  async resolve(token: string): Promise<LiveSession> {
    const tokenSha256 = sha256Hex(token);
    const record = await this.store((store) => store.getSession(tokenSha256));
    if (!record || this.now() >= Date.parse(record.expiresAt)) {
      throw new AuthFailure('session', 'No console session: it expired or was signed out; sign in again.');
    }
    const common = { csrfToken: record.csrfToken, expiresAt: record.expiresAt, tokenSha256 };
    if (record.person !== undefined) return { admin: principalOf(record.person), person: record.person, ...common };
    const key = this.keyOf(record.adminKeyId);
    return { admin: { id: key.id, role: key.role, team: key.team }, ...common };
  }

  /** Ends the session of a cookie token; answers it (undefined when there was none). */
  async end(token: string): Promise<ConsoleSessionRecord | undefined> {
    const tokenSha256 = sha256Hex(token);
    const record = await this.store((store) => store.getSession(tokenSha256));
    if (record) await this.store((store) => store.deleteSession(tokenSha256));
    return record;
  }

  /** The admin key behind a session as the directory has it now: a revoked, disabled or expired one ends the session. */
  private keyOf(id: string): AdminKeyView {
    let key: AdminKeyView;
    try {
      key = this.directory.get(id);
    } catch {
      throw new AuthFailure('revoked', 'The admin key of this console session has been revoked; sign in again.');
    }
    if (key.disabled) throw new AuthFailure('disabled', 'The admin key of this console session is disabled.');
    if (key.expiresAt !== null && this.now() >= Date.parse(key.expiresAt)) {
      throw new AuthFailure('expired', `The admin key of this console session expired at ${key.expiresAt}.`);
    }
    return key;
  }

  private async store<T>(operation: (store: DurableStore) => Promise<T>): Promise<T> {
    try {
      return await operation(this.handle.require());
    } catch (err) {
      if (err instanceof DatabaseUnavailableError) throw errors.databaseUnavailable();
      throw err;
    }
  }
}

/** The admin principal a person's session acts as: `oidc:<sub>`, the role their groups gave, their email for the audit. */
function principalOf(person: SessionPerson): AdminPrincipal {
  return { id: person.id, role: person.role, team: person.team, ...(person.email === null ? {} : { email: person.email }) };
}

/** Whether a write's `x-csrf-token` is its session's (in constant time: the token is a secret). */
export function csrfMatches(sent: string | string[] | undefined, expected: string): boolean {
  if (typeof sent !== 'string') return false;
  const a = Buffer.from(sent);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
