import { describe, expect, it } from 'vitest';
import { ConfigError, parseConfig } from '../../../src/config/index.js';
import { emailDomainAllowed, flowCookie, groupsOf, openFlow, roleOfGroups, sealFlow } from '../../../src/oidc/index.js';

const minimal = 'upstreams: {service: {url: "http://svc:9000"}, inference: {url: "http://inf:9001"}}\n';
const oidc = (extra = ''): string => `${minimal}console: {oidc: {issuer: "https://idp.example.com/realms/acme", clientId: tollgate, clientSecret: s3cret, roles: {admin: [ops]}${extra}}}`;
const ROLES = { admin: ['platform-admins'], viewer: ['finance'], teamAdmin: { 'team-a': ['team-a-leads'], 'team-b': ['team-b-leads'] } };

describe('groups -> the console role (SPEC 25)', () => {
  it.each([
    [['finance', 'platform-admins'], { role: 'admin', team: null }],
    [['team-a-leads', 'finance'], { role: 'viewer', team: null }],
    [['team-b-leads'], { role: 'team-admin', team: 'team-b' }],
    [['team-b-leads', 'team-a-leads'], { role: 'team-admin', team: 'team-a' }],
    [['interns'], null],
    [[], null],
    [['Platform-Admins'], null],
  ])('%j gives %j (the highest role; group names exact)', (groups, expected) => {
    expect(roleOfGroups(ROLES, groups)).toEqual(expected);
  });

  it('reads the groups claim as a list, a single string as one group, anything else as none', () => {
    expect(groupsOf(['a', 'b'])).toEqual(['a', 'b']);
    expect(groupsOf('a')).toEqual(['a']);
    expect(groupsOf([1, 'a'])).toBeUndefined();
    expect(groupsOf({ a: true })).toBeUndefined();
    expect(groupsOf(undefined)).toBeUndefined();
  });

  it.each([
    [undefined, null, true],
    [['acme.com'], 'p@acme.com', true],
    [['acme.com'], 'p@EU.Acme.com', true],
    [['acme.com'], 'p@notacme.com', false],
    [['acme.com'], 'p@acme.com.evil.example', false],
    [['acme.com'], 'acme.com', false],
    [['acme.com'], null, false],
  ])('allowedDomains %j admits %j: %s', (domains, email, allowed) => {
    expect(emailDomainAllowed(domains, email)).toBe(allowed);
  });
});

describe('the sign-in flow cookie', () => {
  const flow = { state: 'st', nonce: 'no', verifier: 've', expires: 2_000 };

  it('opens what it sealed, with the same secret and before it expires', () => {
    const sealed = sealFlow(flow, 'secret');
    expect(openFlow(sealed, 'secret', 1_999)).toEqual(flow);
    expect(openFlow(sealed, 'secret', 2_000)).toBeUndefined();
    expect(openFlow(sealed, 'another secret', 1_000)).toBeUndefined();
  });

  it('refuses an altered payload or MAC, and what is not a flow at all', () => {
    const [payload, mac] = sealFlow(flow, 'secret').split('.') as [string, string];
    const altered = Buffer.from(JSON.stringify({ ...flow, state: 'other' })).toString('base64url');
    expect(openFlow(`${altered}.${mac}`, 'secret', 1_000)).toBeUndefined();
    expect(openFlow(`${payload}.${mac.slice(0, -2)}AA`, 'secret', 1_000)).toBeUndefined();
    expect(openFlow(`${payload}`, 'secret', 1_000)).toBeUndefined();
    expect(openFlow(`${payload}.${mac}.x`, 'secret', 1_000)).toBeUndefined();
    expect(openFlow(undefined, 'secret', 1_000)).toBeUndefined();
  });

  it('survives the cross-site redirect back (Lax), for /admin/oidc only, out of scripts; cleared with Max-Age=0', () => {
    expect(flowCookie('v', false)).toBe('tollgate_oidc=v; Path=/admin/oidc; HttpOnly; SameSite=Lax; Max-Age=600');
    expect(flowCookie(null, true)).toBe('tollgate_oidc=; Path=/admin/oidc; HttpOnly; SameSite=Lax; Max-Age=0; Secure');
  });
});

describe('console.oidc config', () => {
  it('fills the defaults: scopes, groups claim, key sign-in on', () => {
    const config = parseConfig(oidc(), {});
    expect(config.console).toMatchObject({ keySignIn: true, oidc: { scopes: ['openid', 'email', 'profile', 'groups'], groupsClaim: 'groups', roles: { admin: ['ops'], viewer: [], teamAdmin: {} } } });
    expect(parseConfig(minimal, {}).console).toEqual({ keySignIn: true });
  });

  it.each([
    ['an issuer that is not http(s)', `${minimal}console: {oidc: {issuer: "ftp://idp", clientId: t, clientSecret: s, roles: {admin: [ops]}}}`, 'config: console.oidc.issuer: must be an http:// or https:// URL'],
    ['no role mapped', `${minimal}console: {oidc: {issuer: "https://idp", clientId: t, clientSecret: s}}`, 'config: console.oidc.roles: must map at least one group to a role (admin, viewer or teamAdmin)'],
    ['scopes without openid', oidc(', scopes: [email]'), 'config: console.oidc.scopes: must include openid'],
    ['a domain that is not one', oidc(', allowedDomains: ["@acme"]'), 'config: console.oidc.allowedDomains[0]: must be a domain such as acme.com'],
    ['an unknown key', oidc(', groupClaim: roles'), 'config: console.oidc: unknown key(s) "groupClaim"'],
    ['key sign-in off without an IdP', `${minimal}console: {keySignIn: false}`, 'config: console.keySignIn: may be false only when console.oidc is configured (else no one could sign in)'],
  ])('refuses %s with the key path', (_name, yaml, message) => {
    expect(() => parseConfig(yaml, {})).toThrow(new ConfigError(message));
  });
});
