import { InvalidCursorError } from '../core/errors.js';
import { isoInstant } from '../core/rows.js';

/**
 * Where a page ended: the (at, id) of its last row, the ledger's order. The id is the row's own,
 * unique even when requests share an x-request-id; rows kept from before version 2 of the schema
 * have their request id as id, so a cursor handed out then still finds its place.
 */
export interface LedgerPosition {
  at: string;
  id: string;
}

/** Opaque to clients (base64url JSON), so the position can grow fields without breaking them. */
export function encodeCursor(position: LedgerPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.id])).toString('base64url');
}

export function decodeCursor(cursor: string): LedgerPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { at: isoInstant(value[0]), id: value[1] };
    }
  } catch {
    // not base64url JSON, or not an instant: the same answer as any other foreign cursor
  }
  throw new InvalidCursorError();
}
