import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHostileIdp, type HostileIdp, type IdTokenForgery } from '../../fixtures/hostile-idp.js';
import { startInferenceHost } from '../../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../../fixtures/training-service.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';

// SPEC 25: the console accepts an ID token only from its issuer, for its client, unexpired and
// signed by a key the issuer publishes. oidc-provider (console-sso.test.ts) signs correct tokens
// only; here an OP that forges them answers the same sign-in, and each forgery must be refused.

const CLIENT_ID = 'tollgate-console';
const CLAIMS = { email: 'alice@acme.com', email_verified: true, name: 'Alice Admin', groups: ['platform-admins'] };

interface CallbackAnswer {
  readonly status: number;
  readonly location: string | null;
  readonly body: string;
  readonly cookies: string[];
}

/** One sign-in as a browser makes it, redirects followed by hand: login → the IdP → the callback with the flow cookie. */
async function signIn(gatewayUrl: string): Promise<CallbackAnswer> {
  const login = await fetch(`${gatewayUrl}/admin/oidc/login`, { redirect: 'manual' });
  expect(login.status).toBe(303);
  const flowCookie = login.headers.getSetCookie().map((cookie) => cookie.split(';')[0]).join('; ');
  const authorize = await fetch(login.headers.get('location')!, { redirect: 'manual' });
  expect(authorize.status).toBe(303);
  const callback = await fetch(authorize.headers.get('location')!, { redirect: 'manual', headers: { cookie: flowCookie } });
  return { status: callback.status, location: callback.headers.get('location'), body: await callback.text(), cookies: callback.headers.getSetCookie() };
}

const sessionSet = (answer: CallbackAnswer): boolean => answer.cookies.some((cookie) => /^tollgate_session=[^;]+;/.test(cookie));

describe('console sign-in refuses forged ID tokens (SPEC 25)', () => {
  let idp: HostileIdp;
  let service: FakeUpstream;
  let inference: FakeUpstream;
  let gw: RunningGateway;

  beforeAll(async () => {
    [idp, service, inference] = await Promise.all([startHostileIdp(CLIENT_ID, CLAIMS), startTrainingService(), startInferenceHost()]);
    gw = await startGateway(
      testConfig(
        { service: service.url, inference: inference.url },
        {
          console: { oidc: { issuer: idp.issuer, clientId: CLIENT_ID, clientSecret: 'a-client-secret-of-32-characters', roles: { admin: ['platform-admins'] }, allowedDomains: ['acme.com'] } },
          auth: { failureLimit: { perMinute: 100, blockSeconds: 60 } },
        },
      ),
    );
  });
  afterAll(async () => {
    await gw?.close();
    await Promise.all([idp?.close(), service?.close(), inference?.close()]);
  });

  it('signs in with a well-formed token from the same OP (the control: the forgeries below differ in one thing each)', async () => {
    idp.forgery = 'none';
    const answer = await signIn(gw.url);
    expect([answer.status, answer.location, sessionSet(answer)]).toEqual([303, '/console/', true]);
  });

  it.each<[IdTokenForgery, string]>([
    ['other-issuer', 'an issuer other than the configured one'],
    ['other-audience', 'an audience other than this client'],
    ['expired', 'an exp an hour ago'],
    ['alg-none', 'no signature (alg: none)'],
    ['unknown-key', 'a signature by a key the issuer does not publish'],
  ])('refuses an ID token with %s (%s): "Sign-in failed", no session', async (forgery) => {
    idp.forgery = forgery;
    const before = idp.tokenRequests;
    const answer = await signIn(gw.url);
    expect(idp.tokenRequests).toBe(before + 1);
    expect(answer.status).toBe(401);
    expect(answer.body).toContain('Sign-in failed');
    expect(answer.body).toContain('The identity provider&#39;s answer was refused');
    expect(sessionSet(answer)).toBe(false);
  });
});
