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
