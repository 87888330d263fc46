import type { LimitSet } from '../config/index.js';

/** Defined in projects/, which needs nothing from auth; `Principal` satisfies its `ProjectRights`. */
export type { ProjectRef } from '../projects/index.js';

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
  /** Its own model patterns (SPEC 21; `@group`s unresolved); null or absent: `models.default`. */
  readonly models?: readonly string[] | null;
}

