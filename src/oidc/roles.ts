import type { OidcSettings } from '../config/index.js';

/** The role a person's groups give (SPEC 25): the highest of them, admin > viewer > team-admin. */
export interface MappedRole {
  readonly role: 'admin' | 'viewer' | 'team-admin';
  readonly team: string | null;
}

/**
 * The role of a person in `groups`, or null when no group maps to one. A person in the lead
 * groups of several teams manages the first of them in the configuration's order (a team-admin
 * manages one team: SPEC 16).
 */
export function roleOfGroups(roles: OidcSettings['roles'], groups: readonly string[]): MappedRole | null {
  const member = new Set(groups);
  const inAny = (list: readonly string[]): boolean => list.some((group) => member.has(group));
  if (inAny(roles.admin)) return { role: 'admin', team: null };
  if (inAny(roles.viewer)) return { role: 'viewer', team: null };
  for (const [team, list] of Object.entries(roles.teamAdmin)) if (inAny(list)) return { role: 'team-admin', team };
  return null;
}

/** The groups claim's value as a list of names: a string array, or one string (some IdPs send a single group so). */
export function groupsOf(value: unknown): string[] | undefined {
  if (typeof value === 'string') return [value];
  if (Array.isArray(value) && value.every((group) => typeof group === 'string')) return value;
  return undefined;
}

/** Whether `email` is in one of `domains` (exactly, or a subdomain of one); no list admits anyone. */
export function emailDomainAllowed(domains: readonly string[] | undefined, email: string | null): boolean {
  if (domains === undefined) return true;
  if (email === null) return false;
  const at = email.lastIndexOf('@');
  if (at < 1) return false;
  const domain = email.slice(at + 1).toLowerCase();
  return domains.some((allowed) => domain === allowed || domain.endsWith(`.${allowed}`));
}
