import * as client from 'openid-client';
import type { OidcSettings } from '../config/index.js';
import { FLOW_LIFETIME_SECONDS, type SignInFlow } from './flow-cookie.js';

/** After a failed discovery, the next sign-in asks again only after this (an IdP that is down is not hammered). */
const RETRY_AFTER_MS = 5_000;
/** Discovery, token and user-info calls give up after this many seconds. */
const IDP_TIMEOUT_SECONDS = 5;

/** What the sign-in page says of the identity provider. */
export interface ProviderStatus {
  readonly ready: boolean;
  /** Why it cannot be used now, in words for the sign-in page (never a secret). */
  readonly message?: string;
}

/** What the IdP vouched for at a callback. */
export interface VerifiedPerson {
  readonly sub: string;
  readonly email: string | null;
  readonly emailVerified: boolean;
  readonly name: string | null;
  /** The groups claim's raw value (ID token, else user info). */
  readonly groups: unknown;
  /** The ID token's expiry, ms since the epoch. */
  readonly notAfter: number;
}

/**
 * The identity provider of `console.oidc`, through `openid-client` (SPEC 25): discovery on first
 * use, never at start-up (an IdP that is down must not keep the gateway from starting); the ID
 * token's signature checked against the IdP's JWKS (openid-client 6 does so only with its
 * non-repudiation checks on), its issuer, audience, expiry and nonce.
 */
export class IdentityProvider {
  private discovery: Promise<client.Configuration> | undefined;
  private failedAt = 0;
  private lastError: string | undefined;

  constructor(readonly settings: OidcSettings) {}

  /** The discovered configuration; rejects (with a message for people) while the IdP cannot be reached. */
  configuration(now = Date.now()): Promise<client.Configuration> {
    if (this.discovery === undefined && this.lastError !== undefined && now - this.failedAt < RETRY_AFTER_MS) {
      return Promise.reject(new Error(this.lastError));
    }
    this.discovery ??= this.discover().catch((err: unknown) => {
      this.discovery = undefined;
      this.failedAt = Date.now();
      this.lastError = `The identity provider at ${this.settings.issuer} cannot be reached or is misconfigured (${describe(err)}).`;
      throw new Error(this.lastError);
    });
    return this.discovery;
  }

  async status(): Promise<ProviderStatus> {
    return this.configuration().then(
      () => ({ ready: true }),
      (err: Error) => ({ ready: false, message: err.message }),
    );
  }

  /** Where the browser goes to sign in, and the flow the callback needs. */
  async start(redirectUri: string): Promise<{ url: URL; flow: SignInFlow }> {
    const configuration = await this.configuration();
    const flow: SignInFlow = { state: client.randomState(), nonce: client.randomNonce(), verifier: client.randomPKCECodeVerifier(), expires: Date.now() + FLOW_LIFETIME_SECONDS * 1000 };
    const url = client.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: this.settings.scopes.join(' '),
      code_challenge: await client.calculatePKCECodeChallenge(flow.verifier),
      code_challenge_method: 'S256',
      state: flow.state,
      nonce: flow.nonce,
    });
    return { url, flow };
  }

  /** Redeems the callback's code (its `state` and the ID token's `nonce` checked against `flow`); throws when anything is off. */
  async finish(callbackUrl: URL, flow: SignInFlow): Promise<VerifiedPerson> {
    const configuration = await this.configuration();
    const tokens = await client.authorizationCodeGrant(configuration, callbackUrl, {
      pkceCodeVerifier: flow.verifier,
      expectedState: flow.state,
      expectedNonce: flow.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims();
    if (claims === undefined) throw new Error('the token answer has no ID token');
    const claim = this.settings.groupsClaim;
    let groups: unknown = claims[claim];
    let profile: Record<string, unknown> = claims;
    if (groups === undefined) {
      profile = await client.fetchUserInfo(configuration, tokens.access_token, claims.sub);
      groups = profile[claim];
    }
    const text = (value: unknown): string | null => (typeof value === 'string' && value !== '' ? value : null);
    return {
      sub: claims.sub,
      email: text(claims.email) ?? text(profile.email),
      emailVerified: (claims.email_verified ?? profile.email_verified) !== false,
      name: text(claims.name) ?? text(profile.name),
      groups,
      notAfter: claims.exp * 1000,
    };
  }

  /** The IdP's sign-out address for a person signing out, when discovery names an end-session endpoint. */
  async endSessionUrl(postLogoutRedirectUri: string): Promise<string | undefined> {
    const configuration = await this.configuration().catch(() => undefined);
    if (configuration?.serverMetadata().end_session_endpoint === undefined) return undefined;
    return client.buildEndSessionUrl(configuration, { client_id: this.settings.clientId, post_logout_redirect_uri: postLogoutRedirectUri }).href;
  }

  private async discover(): Promise<client.Configuration> {
    const issuer = new URL(this.settings.issuer);
    const configuration = await client.discovery(issuer, this.settings.clientId, undefined, client.ClientSecretBasic(this.settings.clientSecret), {
      // An on-premises IdP (and the tests') may speak plain HTTP: accepted, with the warning the gateway logs at start.
      execute: issuer.protocol === 'http:' ? [client.allowInsecureRequests] : [],
      timeout: IDP_TIMEOUT_SECONDS,
    });
    client.enableNonRepudiationChecks(configuration);
    configuration.timeout = IDP_TIMEOUT_SECONDS;
    return configuration;
  }
}

/** An error as a short phrase: openid-client's code and message, never a token. */
export function describe(err: unknown): string {
  if (err instanceof client.ResponseBodyError) return `${err.error}${err.error_description === undefined ? '' : `: ${err.error_description}`}`;
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === 'string' ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
