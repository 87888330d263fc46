import type { IncomingHttpHeaders, OutgoingHttpHeaders } from 'node:http';

/** RFC 9110 7.6.1 hop-by-hop headers, plus the de-facto ones proxies drop. */
const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
]);

/**
 * Headers in which a client may claim who it is or how it reached the gateway. Behind no
 * trusted proxy every form of them is dropped (the gateway sets X-Forwarded-* itself), so an
 * upstream that keys anything on the client's address cannot be fooled by a forged one.
 */
export const CLIENT_FORWARDING_HEADERS: readonly string[] = [
  'forwarded',
  'x-forwarded-for',
  'x-forwarded-proto',
  'x-forwarded-host',
  'x-forwarded-port',
  'x-forwarded-prefix',
  'x-forwarded-server',
  'x-original-forwarded-for',
  'x-real-ip',
  'x-client-ip',
  'client-ip',
  'true-client-ip',
  'x-cluster-client-ip',
  'cf-connecting-ip',
  'fastly-client-ip',
];

/**
 * Who the gateway admitted, for an upstream with `identityHeaders` on (SPEC 15). Only the gateway
 * says this: copies sent by clients are always removed, whatever the setting.
 */
export const IDENTITY_HEADERS = { team: 'x-tollgate-team', project: 'x-tollgate-project', keyId: 'x-tollgate-key-id' } as const;

const VISIBLE_ASCII_BUT_PERCENT = /^[\x21-\x24\x26-\x7e]*$/;

/**
 * A value as visible ASCII: every UTF-8 byte outside it, and `%`, percent-encoded, so
 * decodeURIComponent gives it back exactly. A JWT subject may hold anything, and a header
 * value with a control character would fail the request.
 */
function asHeaderValue(value: string): string {
  if (VISIBLE_ASCII_BUT_PERCENT.test(value)) return value;
  let out = '';
  for (const byte of Buffer.from(value, 'utf8')) {
    out += byte > 0x20 && byte < 0x7f && byte !== 0x25 ? String.fromCharCode(byte) : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}

/** Adds the identity headers to request headers bound upstream. */
export function addIdentityHeaders(headers: IncomingHttpHeaders, identity: { team: string; project: string; keyId: string }): void {
  headers[IDENTITY_HEADERS.team] = asHeaderValue(identity.team);
  headers[IDENTITY_HEADERS.project] = asHeaderValue(identity.project);
  headers[IDENTITY_HEADERS.keyId] = asHeaderValue(identity.keyId);
}

const NO_TOKENS: readonly string[] = [];

function connectionTokens(value: string | string[] | undefined): readonly string[] {
  if (value === undefined) return NO_TOKENS;
  const text = Array.isArray(value) ? value.join(',') : value;
  // What nearly every client and server sends; it names only a header dropped anyway.
  if (text === 'keep-alive') return NO_TOKENS;
  return text
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
}

/**
 * The request headers to send upstream: a copy of `headers` without hop-by-hop headers, any
 * the Connection header names, and `alsoDrop`. A copy rather than `delete`s: deleting a
 * header the client sent (`connection: keep-alive`, nearly always) turns the object into a
 * slow dictionary-mode object, which http-proxy-3 then copies again for every request.
 */
export function forwardableHeaders(headers: IncomingHttpHeaders, alsoDrop: ReadonlySet<string>): IncomingHttpHeaders {
  const named = connectionTokens(headers.connection);
  const out: IncomingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || alsoDrop.has(name) || named.includes(name)) continue;
    out[name] = headers[name];
  }
  return out;
}

/** The upstream response headers a client should see: everything but hop-by-hop ones. */
export function endToEndHeaders(headers: IncomingHttpHeaders): OutgoingHttpHeaders {
  const named = connectionTokens(headers.connection);
  const out: OutgoingHttpHeaders = {};
  for (const name in headers) {
    if (HOP_BY_HOP.has(name) || named.includes(name)) continue;
    out[name] = headers[name];
  }
  return out;
}
