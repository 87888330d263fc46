/**
 * The few parts of `oidc-provider` (v9, which ships no typings) the test IdP uses; typed here
 * rather than adding @types/oidc-provider, which lags the major version.
 */
declare module 'oidc-provider' {
  import type { IncomingMessage, ServerResponse } from 'node:http';

  export interface AccountClaims {
    sub: string;
    [claim: string]: unknown;
  }
  export interface Account {
    accountId: string;
    claims(): Promise<AccountClaims>;
  }
  export class Grant {
    constructor(properties: { clientId: string; accountId: string });
    addOIDCScope(scope: string): void;
    save(): Promise<string>;
  }
  export interface KoaContextWithOIDC {
    oidc: {
      provider: Provider;
      client?: { clientId: string };
      session?: { accountId?: string };
    };
  }
  export interface Configuration {
    clients: Record<string, unknown>[];
    scopes?: string[];
    claims?: Record<string, string[]>;
    conformIdTokenClaims?: boolean;
    ttl?: Record<string, number>;
    cookies?: { keys: string[] };
    features?: Record<string, { enabled: boolean }>;
    findAccount(ctx: KoaContextWithOIDC, id: string): Promise<Account | undefined>;
    loadExistingGrant?(ctx: KoaContextWithOIDC): Promise<Grant | undefined>;
  }
  export default class Provider {
    constructor(issuer: string, configuration: Configuration);
    readonly Grant: typeof Grant;
    on(event: string, listener: (...args: unknown[]) => void): this;
    callback(): (req: IncomingMessage, res: ServerResponse) => void;
  }
}
