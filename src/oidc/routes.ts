import type { Express, Request, RequestHandler, Response } from 'express';
import { AuthFailure, clientAddress, type AuthFailureLimit } from '../auth/index.js';
import type { Config, OidcSettings } from '../config/index.js';
import { asGatewayError } from '../errors.js';
import type { Logger, Metrics } from '../observability/index.js';
import { sessionCookie, type ConsoleSessions } from '../sessions/index.js';
import type { SessionPerson } from '../store/index.js';
import { flowCookie, flowCookieOf, openFlow, sealFlow } from './flow-cookie.js';
import { sendSignInPage } from './pages.js';
import { describe, IdentityProvider, type VerifiedPerson } from './provider.js';
import { emailDomainAllowed, groupsOf, roleOfGroups } from './roles.js';

/** Where the console lives: a signed-in person is sent there. */
const CONSOLE_HOME = '/console/';
const CALLBACK_PATH = '/admin/oidc/callback';

/** How a sign-in through the IdP is recorded in the audit log (the same action as a key's sign-in). */
export type SignInAudit = (actor: string, result: string, requestId: string, role?: string, email?: string) => void;

export interface OidcRouteDeps {
  readonly config: () => Config;
  readonly sessions: ConsoleSessions;
  readonly failureLimit: AuthFailureLimit;
  readonly metrics: Metrics;
  readonly logger: Logger;
  readonly audit: SignInAudit;
}

/** A refusal after the IdP answered: the page's status and words, and the audit result. */
class SignInRefused extends Error {
  constructor(
    readonly status: number,
    readonly title: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The identity provider of the running configuration: the same object while `console.oidc` is
 * unchanged (its discovery is kept), a new one after a reload changes it.
 */
export class ProviderSlot {
  private current: { settings: OidcSettings; provider: IdentityProvider } | undefined;

  constructor(private readonly logger: Logger) {}

  of(settings: OidcSettings | undefined): IdentityProvider | undefined {
    if (settings === undefined) return undefined;
    if (this.current === undefined || JSON.stringify(this.current.settings) !== JSON.stringify(settings)) {
      this.current = { settings, provider: new IdentityProvider(settings) };
      if (settings.issuer.startsWith('http:')) this.logger.warn({ issuer: settings.issuer }, 'console.oidc.issuer is plain http: accepted for an on-premises IdP, but tokens cross the network unencrypted');
    }
    return this.current.provider;
  }
}

const requestIdOf = (res: Response): string => String(res.getHeader('x-request-id') ?? '');

/** The callback address the IdP sends the browser back to: configured, else this gateway's as the request reached it. */
const redirectUriOf = (req: Request, settings: OidcSettings): string => settings.redirectUrl ?? `${req.protocol}://${req.host}${CALLBACK_PATH}`;

/** `GET /admin/oidc/status` (no credential): what the sign-in page offers. */
function status(deps: OidcRouteDeps, slot: ProviderSlot): RequestHandler {
  return async (_req, res) => {
    const { oidc, keySignIn } = deps.config().console;
    const provider = slot.of(oidc);
    const idp = provider === undefined ? null : { name: provider.settings.displayName, ...(await provider.status()) };
    res.set('cache-control', 'no-store').json({ keySignIn, oidc: idp });
  };
}

/** `GET /admin/oidc/login`: off to the IdP with a fresh state, nonce and PKCE challenge. */
function login(deps: OidcRouteDeps, slot: ProviderSlot): RequestHandler {
  return async (req, res) => {
    const provider = slot.of(deps.config().console.oidc);
    if (provider === undefined) return sendSignInPage(res, 404, 'Sign-in with an identity provider is not configured', 'This gateway has no console.oidc configuration.');
    try {
      const { url, flow } = await provider.start(redirectUriOf(req, provider.settings));
      res.set({ 'set-cookie': flowCookie(sealFlow(flow, provider.settings.clientSecret), req.secure), 'cache-control': 'no-store' }).redirect(303, url.href);
    } catch (err) {
      deps.logger.warn({ err: describe(err) }, 'console sign-in: the identity provider cannot be used');
      const keys = deps.config().console.keySignIn ? ' Sign in with an admin key meanwhile.' : '';
      sendSignInPage(res, 503, 'The identity provider cannot be reached', `${(err as Error).message}${keys}`);
    }
  };
}

/** The person the callback's code names, checked against the flow its cookie carries; a 401 AuthFailure otherwise. */
async function verifiedPerson(req: Request, provider: IdentityProvider): Promise<VerifiedPerson> {
  const flow = openFlow(flowCookieOf(req.headers.cookie), provider.settings.clientSecret, Date.now());
  if (flow === undefined) throw new AuthFailure('oidc', 'The sign-in has no valid state: it was started elsewhere, altered, used already or is older than 10 minutes.');
  const callbackUrl = new URL(redirectUriOf(req, provider.settings));
  callbackUrl.search = new URL(req.originalUrl, 'http://callback').search;
  try {
    return await provider.finish(callbackUrl, flow);
  } catch (err) {
    throw new AuthFailure('oidc', `The identity provider's answer was refused (${describe(err)}).`);
  }
}

/** The session's person, or why there is none (no mapped group, a domain outside allowedDomains). */
function personOf(verified: VerifiedPerson, settings: OidcSettings): SessionPerson {
  if (!emailDomainAllowed(settings.allowedDomains, verified.emailVerified ? verified.email : null)) {
    throw new SignInRefused(403, 'Your account may not use this console', 'oidc_domain_not_allowed', `Sign-in is limited to accounts of ${settings.allowedDomains!.join(', ')} with a verified email; ${verified.email ?? 'your account has no email'} is not one.`);
  }
  const groups = groupsOf(verified.groups) ?? [];
  const role = roleOfGroups(settings.roles, groups);
  if (role === null) {
    throw new SignInRefused(403, 'Your account has no role in this console', 'oidc_no_role', `None of your groups (claim "${settings.groupsClaim}") is mapped to a console role; ask the gateway's operators to add one of them.`);
  }
  return { id: `oidc:${verified.sub}`, email: verified.email, name: verified.name, ...role };
}

/** `GET /admin/oidc/callback`: the IdP's answer → a console session, or a page that says why not. */
function callback(deps: OidcRouteDeps, slot: ProviderSlot): RequestHandler {
  return async (req, res) => {
    const config = deps.config();
    const provider = slot.of(config.console.oidc);
    if (provider === undefined) return sendSignInPage(res, 404, 'Sign-in with an identity provider is not configured', 'This gateway has no console.oidc configuration.');
    res.setHeader('set-cookie', flowCookie(null, req.secure));
    let actor = 'oidc:unknown';
    try {
      const verified = await deps.failureLimit.guard(clientAddress(req, config.server.trustProxy), () => verifiedPerson(req, provider));
      actor = `oidc:${verified.sub}`;
      const person = personOf(verified, provider.settings);
      const session = await deps.sessions.createForPerson(person, verified.notAfter);
      deps.audit(person.id, 'ok', requestIdOf(res), person.role, person.email ?? undefined);
      res.setHeader('set-cookie', [flowCookie(null, req.secure), sessionCookie(session.token, req.secure)]);
      res.redirect(303, CONSOLE_HOME);
    } catch (err) {
      refuse(deps, res, actor, err);
    }
  };
}

function refuse(deps: OidcRouteDeps, res: Response, actor: string, err: unknown): void {
  if (err instanceof SignInRefused) {
    deps.audit(actor, err.code, requestIdOf(res));
    return sendSignInPage(res, err.status, err.title, err.message);
  }
  const error = asGatewayError(err);
  deps.metrics.recordRefusal(error);
  deps.audit(actor, error.status === 401 ? 'oidc_sign_in_failed' : error.code, requestIdOf(res));
  if (error.status >= 500) deps.logger.error({ err: describe(err) }, 'console sign-in through the identity provider failed');
  else deps.logger.warn({ reason: error.message }, 'console sign-in through the identity provider refused');
  for (const [name, value] of Object.entries(error.headers)) if (name.toLowerCase() === 'retry-after') res.setHeader(name, value);
  sendSignInPage(res, error.status, error.status === 429 ? 'Too many failed sign-ins' : 'Sign-in failed', error.message);
}

/** `/admin/oidc/*` (SPEC 25): the sign-in page's status, the redirect to the IdP and its callback. No credential needed. */
export function mountOidcRoutes(app: Express, deps: OidcRouteDeps, slot: ProviderSlot): void {
  app.get('/admin/oidc/status', status(deps, slot));
  app.get('/admin/oidc/login', login(deps, slot));
  app.get(CALLBACK_PATH, callback(deps, slot));
}
