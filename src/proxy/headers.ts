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

function connectionTokens(value: string | string[] | undefined): string[] {
  if (value === undefined) return [];
  const text = Array.isArray(value) ? value.join(',') : value;
  return text
    .split(',')
    .map((t) => t.trim().toLowerCase())
    .filter(Boolean);
}

/** Removes hop-by-hop headers (and any the Connection header names) in place. */
export function stripHopByHop(headers: IncomingHttpHeaders): void {
  for (const token of connectionTokens(headers.connection)) delete headers[token];
  for (const name of HOP_BY_HOP) delete headers[name];
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
