import { randomUUID } from 'node:crypto';

/**
 * A new ledger row id: a UUIDv7 (RFC 9562) — 48 bits of Unix milliseconds, then 74 random bits.
 * The gateway makes one per request, so two requests are two rows whatever x-request-id their
 * clients chose. Time first keeps PostgreSQL's primary-key index appending at its right edge
 * instead of touching random pages. The random bits come from randomUUID (a v4: 122 random bits
 * from Node's batched entropy pool, cheaper per call than randomBytes).
 */
export function newLedgerRowId(now = Date.now()): string {
  const time = now.toString(16).padStart(12, '0');
  const random = randomUUID();
  // v4 layout: xxxxxxxx-xxxx-4xxx-Vxxx-xxxxxxxxxxxx (V holds the variant bits, kept as they are).
  return `${time.slice(0, 8)}-${time.slice(8, 12)}-7${random.slice(15, 18)}-${random.slice(19, 23)}-${random.slice(24)}`;
}
