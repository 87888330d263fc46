/**
 * The database could not answer: unreachable, refusing connections, shut down, or slower than
 * the call's bound. Admin writes turn it into 503 `database_unavailable`; the request path keeps
 * serving from memory. The original failure, when there is one, is the `cause`.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
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
