/**
 * The database could not answer: unreachable, refusing connections, shut down, or slower than
 * the call's bound. Admin writes turn it into 503 `database_unavailable`; the request path keeps
 * serving from memory. The original failure, when there is one, is the `cause`.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
}

/**
 * Whether the database refused the records themselves — a value it cannot store (a NUL in
 * PostgreSQL text, an index entry past its size limit), a constraint — so writing them again
 * cannot succeed, unlike a DatabaseUnavailableError, which a retry outlasts. Read from the
 * driver's code: PostgreSQL's SQLSTATE classes 22 (data exception), 23 (integrity constraint)
 * and 54 (program limit exceeded); SQLite's CONSTRAINT, TOOBIG, MISMATCH and RANGE. A RangeError
 * is a value the gateway itself will not write (a count that is not an integer).
 */
export function isRecordRefused(err: unknown): boolean {
  if (err instanceof RangeError) return true;
  const code = err instanceof Error ? (err as Error & { code?: unknown }).code : undefined;
  if (typeof code !== 'string' || err instanceof DatabaseUnavailableError) return false;
  return /^(22|23|54)[0-9A-Z]{3}$/.test(code) || /^SQLITE_(CONSTRAINT|TOOBIG|MISMATCH|RANGE)/.test(code);
}

/** The database was migrated by a newer Tollgate: this one must not touch it. */
export class SchemaTooNewError extends Error {
  override name = 'SchemaTooNewError';

  constructor(
    readonly databaseVersion: number,
    readonly knownVersion: number,
  ) {
    super(`database schema is at version ${databaseVersion}, newer than this Tollgate (knows ${knownVersion}): upgrade Tollgate`);
  }
}

/** A key id exists already, or did once: revoked ids are never reused (SPEC 12.1). */
export class KeyIdTakenError extends Error {
  override name = 'KeyIdTakenError';

  constructor(readonly keyId: string) {
    super(`key id "${keyId}" is taken (in use or revoked)`);
  }
}

/** A secret digest belongs to another key already (a digest is globally unique). */
export class SecretDigestTakenError extends Error {
  override name = 'SecretDigestTakenError';

  constructor() {
    super('this secret digest belongs to another key');
  }
}

/** A ledger cursor that this store did not hand out (or was altered). */
export class InvalidCursorError extends Error {
  override name = 'InvalidCursorError';

  constructor() {
    super('invalid ledger cursor');
  }
}

/** A team id exists already. */
export class TeamIdTakenError extends Error {
  override name = 'TeamIdTakenError';

  constructor(readonly teamId: string) {
    super(`team id "${teamId}" is taken`);
  }
}
