import { InvalidCursorError } from './errors.js';
import { isoInstant } from './rows.js';

/** Where a page ended: the (at, requestId) of its last row, the ledger's order. */
export interface LedgerPosition {
  at: string;
  requestId: string;
}

/** Opaque to clients (base64url JSON), so the position can grow fields without breaking them. */
export function encodeCursor(position: LedgerPosition): string {
  return Buffer.from(JSON.stringify([position.at, position.requestId])).toString('base64url');
}

export function decodeCursor(cursor: string): LedgerPosition {
  try {
    const value: unknown = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8'));
    if (Array.isArray(value) && value.length === 2 && typeof value[0] === 'string' && typeof value[1] === 'string') {
      return { at: isoInstant(value[0]), requestId: value[1] };
    }
  } catch {
    // not base64url JSON, or not an instant: the same answer as any other foreign cursor
  }
  throw new InvalidCursorError();
}
