import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { cookieValue } from '../sessions/index.js';

/**
 * What a sign-in carries across the redirect to the identity provider and back: the `state` the
 * callback must echo, the `nonce` the ID token must hold and the PKCE verifier. The browser keeps
 * it in a cookie for /admin/oidc only, HttpOnly, SameSite=Lax (the IdP's redirect back is a
 * cross-site top-level navigation, which a Strict cookie would miss), MAC'd with a key derived
 * from the client secret so that every instance reads it and none accepts an altered one.
 */
export interface SignInFlow {
  readonly state: string;
  readonly nonce: string;
  readonly verifier: string;
  /** Ms since the epoch after which the flow is stale. */
  readonly expires: number;
}

export const FLOW_COOKIE = 'tollgate_oidc';
export const FLOW_PATH = '/admin/oidc';
/** A sign-in at the IdP must come back within this. */
export const FLOW_LIFETIME_SECONDS = 600;

const macKey = (clientSecret: string): Buffer => createHash('sha256').update('tollgate console sign-in flow\0').update(clientSecret).digest();
const macOf = (payload: string, clientSecret: string): Buffer => createHmac('sha256', macKey(clientSecret)).update(payload).digest();

export function sealFlow(flow: SignInFlow, clientSecret: string): string {
  const payload = Buffer.from(JSON.stringify(flow)).toString('base64url');
  return `${payload}.${macOf(payload, clientSecret).toString('base64url')}`;
}

/** The flow a cookie value holds, if it is one of ours, unaltered and not stale. */
export function openFlow(value: string | undefined, clientSecret: string, now: number): SignInFlow | undefined {
  if (value === undefined) return undefined;
  const [payload, mac, ...rest] = value.split('.');
  if (payload === undefined || mac === undefined || rest.length > 0) return undefined;
  const expected = macOf(payload, clientSecret);
  const sent = Buffer.from(mac, 'base64url');
  if (sent.length !== expected.length || !timingSafeEqual(sent, expected)) return undefined;
  const flow = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as SignInFlow;
  return typeof flow.expires === 'number' && now < flow.expires ? flow : undefined;
}

/** The flow cookie's value in a Cookie header. */
export function flowCookieOf(cookieHeader: string | undefined): string | undefined {
  return cookieValue(cookieHeader, FLOW_COOKIE);
}

/** The Set-Cookie of a flow; null clears it (a flow is used once). */
export function flowCookie(value: string | null, secure: boolean): string {
  const attributes = [`${FLOW_COOKIE}=${value ?? ''}`, `Path=${FLOW_PATH}`, 'HttpOnly', 'SameSite=Lax', `Max-Age=${value === null ? 0 : FLOW_LIFETIME_SECONDS}`];
  if (secure) attributes.push('Secure');
  return attributes.join('; ');
}
