import type { IncomingMessage } from 'node:http';

/** Longer than any IP address (IPv6 with a zone): a forged header never makes a larger counter key. */
const MAX_ADDRESS_LENGTH = 64;

/**
 * The address a request comes from, as Express's `req.ip` reads it under `trust proxy: true`
 * (what /admin has always used): with `server.trustProxy`, the first (client-most) entry of
 * X-Forwarded-For, else the socket's peer.
 */
export function clientAddress(req: IncomingMessage, trustProxy: boolean): string {
  const peer = req.socket.remoteAddress ?? 'unknown';
  if (!trustProxy) return peer;
  // Node joins repeated X-Forwarded-For headers with ", " into one string.
  const forwarded = req.headers['x-forwarded-for'];
  const first = typeof forwarded === 'string' ? forwarded.split(',', 1)[0]!.trim() : '';
  return first === '' ? peer : first.slice(0, MAX_ADDRESS_LENGTH);
}
