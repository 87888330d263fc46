import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { authorize, narrowedTeam, type RouteAccess } from '../../../src/admin-requests/index.js';
import type { AdminPrincipal } from '../../../src/auth/index.js';
import { GatewayError } from '../../../src/errors.js';

const ROUTE: RouteAccess = { method: 'GET', path: '/admin/keys', access: { admin: 'all', viewer: 'none', 'team-admin': 'own-team' } };

/** A response carrying only what the scope functions read and write: res.locals. */
function response(admin: AdminPrincipal | undefined, teamScope?: string): Response {
  return { locals: { admin, ...(teamScope === undefined ? {} : { teamScope }) } } as unknown as Response;
}

/** What authorize(ROUTE) passes to next, and the scope it leaves on the response. */
function authorized(admin: AdminPrincipal): { passed: unknown; scope: unknown; calls: number } {
  const res = response(admin);
  const calls: unknown[] = [];
  void authorize(ROUTE)({} as Request, res, (err?: unknown) => void calls.push(err));
  return { passed: calls[0], scope: res.locals.teamScope, calls: calls.length };
}

// The one place a team-admin is narrowed to its team: a slip here shows every team's keys and usage.
describe('authorize', () => {
  it('lets an admin through on every team: no scope set', () => {
    expect(authorized({ id: 'root', role: 'admin', team: null })).toEqual({ passed: undefined, scope: undefined, calls: 1 });
  });

  it('narrows a team-admin to its own team', () => {
    expect(authorized({ id: 'ta', role: 'team-admin', team: 'team-a' })).toEqual({ passed: undefined, scope: 'team-a', calls: 1 });
  });

  it('narrows a team-admin without a team to no team at all', () => {
    expect(authorized({ id: 'ta', role: 'team-admin', team: null })).toEqual({ passed: undefined, scope: '', calls: 1 });
  });

  it('refuses a role the route grants nothing: 403 insufficient_role naming the role and the route', () => {
    const { passed, scope, calls } = authorized({ id: 'v', role: 'viewer', team: null });
    expect(calls).toBe(1);
    expect(scope).toBeUndefined();
    expect(passed).toBeInstanceOf(GatewayError);
    const err = passed as GatewayError;
    expect([err.status, err.code, err.message]).toEqual([403, 'insufficient_role', 'The admin role "viewer" may not call GET /admin/keys.']);
  });
});

describe('narrowedTeam', () => {
  it('answers the team asked for when the caller sees every team', () => {
    expect(narrowedTeam(response(undefined), 'team-b')).toBe('team-b');
    expect(narrowedTeam(response(undefined), undefined)).toBeUndefined();
  });

  it('answers the caller\'s team when it names none or its own, and no team when it names another', () => {
    expect(narrowedTeam(response(undefined, 'team-a'), undefined)).toBe('team-a');
    expect(narrowedTeam(response(undefined, 'team-a'), 'team-a')).toBe('team-a');
    expect(narrowedTeam(response(undefined, 'team-a'), 'team-b')).toBe('');
  });
});
