import type { LimitSet } from '../config/index.js';

/** Who is calling: the result of authentication, handed to every later step. */
export interface Principal {
  /** `key` = static API key, `jwt` = verified token. Admin keys never reach /v1. */
  readonly kind: 'key' | 'jwt';
  /** The key id or JWT subject: what logs, metrics and usage records show. Never the secret. */
  readonly id: string;
  readonly team: string;
  /** Projects of `team` this principal may use; `*` means any. */
  readonly projects: ReadonlySet<string>;
  readonly defaultProject: string;
  readonly limits: LimitSet;
}

/** The team/project a request is attributed to (from the project header or the default). */
export interface ProjectRef {
  readonly team: string;
  readonly project: string;
}
