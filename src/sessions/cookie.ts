import { SESSION_LIFETIME_SECONDS } from './console-sessions.js';

/** The console session cookie's name (SPEC 17). */
export const SESSION_COOKIE = 'tollgate_session';

/** The first value of cookie `name` in a Cookie header that `accept` takes (any, by default). */
export function cookieValue(cookieHeader: string | undefined, name: string, accept: (value: string) => boolean = () => true): string | undefined {
  if (cookieHeader === undefined) return undefined;
  for (const pair of cookieHeader.split(';')) {
    const eq = pair.indexOf('=');
    if (eq < 0 || pair.slice(0, eq).trim() !== name) continue;
    const value = pair.slice(eq + 1).trim();
    if (accept(value)) return value;
  }
  return undefined;
}

const isToken = (value: string): boolean => /^[A-Za-z0-9_-]{1,128}$/.test(value);

/**
 * The session token a request's Cookie header carries, if any. Tokens are base64url, so a value
 * in quotes or with other characters is no token of ours.
 */
export function sessionTokenOf(cookieHeader: string | undefined): string | undefined {
  return cookieValue(cookieHeader, SESSION_COOKIE, isToken);
}

/**
 * The Set-Cookie of a session: only for /admin (where the API and nothing else reads it), out of
 * scripts' reach, never sent on a request another site starts, Secure when reached over HTTPS.
 * `token` null clears it.
 */
export function sessionCookie(token: string | null, secure: boolean): string {
  const attributes = [`${SESSION_COOKIE}=${token ?? ''}`, 'Path=/admin', 'HttpOnly', 'SameSite=Strict', `Max-Age=${token === null ? 0 : SESSION_LIFETIME_SECONDS}`];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}
