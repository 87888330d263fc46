import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Principal } from '../../../src/auth/index.js';
import { GatewayError } from '../../../src/errors.js';
import { isValidName, resolveProject } from '../../../src/projects/index.js';
import { createRouteTable, resolveRoute } from '../../../src/proxy/index.js';

// Property-based checks of the two places a client's text picks what the gateway acts on:
// the project header (team/project attribution) and the request path (what is forwarded).

const principal: Principal = {
  kind: 'key',
  id: 'ci-bot',
  team: 'team-a',
  projects: new Set(['prod', 'research']),
  defaultProject: 'prod',
  limits: {},
};

const NAME_CHARS = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-';
const validName = fc.string({ unit: fc.constantFrom(...NAME_CHARS), minLength: 1, maxLength: 128 });
/** Anything a client could put in a header value, including what HTTP parsers let through. */
const anyText = fc.string({ unit: 'binary', maxLength: 300 });

const outcome = (headerValue: string | undefined): { ok: true; team: string; project: string } | { ok: false; status: number; code: string } => {
  try {
    const ref = resolveProject(principal, headerValue, 'OpenAI-Project');
    return { ok: true, ...ref };
  } catch (err) {
    if (!(err instanceof GatewayError)) throw err;
    return { ok: false, status: err.status, code: err.code };
  }
};

describe('project header, for any text', () => {
  it('never throws anything but a 400 or a 403, and attributes only names the key may use', () => {
    fc.assert(
      fc.property(anyText, (value) => {
        const result = outcome(value);
        if (result.ok) {
          expect(result.team).toBe('team-a');
          expect(['prod', 'research']).toContain(result.project);
          expect(value).toBe(`team-a/${result.project}`);
        } else {
          expect([
            [400, 'invalid_project'],
            [403, 'project_forbidden'],
          ]).toContainEqual([result.status, result.code]);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('answers 400 for every value that is not exactly <name>/<name>', () => {
    fc.assert(
      fc.property(anyText, (value) => {
        const slash = value.indexOf('/');
        const wellFormed = slash > 0 && isValidName(value.slice(0, slash)) && isValidName(value.slice(slash + 1));
        expect(outcome(value).ok === false && (outcome(value) as { status: number }).status === 400).toBe(!wellFormed);
      }),
      { numRuns: 2000 },
    );
  });

  it('answers 403 for well-formed names of another team or an unlisted project', () => {
    fc.assert(
      fc.property(validName, validName, (team, project) => {
        const result = outcome(`${team}/${project}`);
        const allowed = team === 'team-a' && (project === 'prod' || project === 'research');
        expect(result.ok).toBe(allowed);
        if (!allowed) expect(result).toEqual({ ok: false, status: 403, code: 'project_forbidden' });
      }),
      { numRuns: 2000 },
    );
  });
});

describe('request path, for any text', () => {
  const table = createRouteTable();
  const segment = fc.oneof(
    fc.string({ unit: fc.constantFrom(...NAME_CHARS, '%', '2', 'e', 'E', 'f', 'F', 'c', 'C', '5', '\\', '.'), maxLength: 12 }),
    fc.constantFrom('..', '.', '%2e%2e', '%2E.', '.%2e', '%2f', '%2F', '%5c', 'a%2fb', '%252e'),
  );
  const path = fc.array(segment, { minLength: 1, maxLength: 6 }).map((parts) => `/v1/preview/models/${parts.join('/')}`);

  const decodes = (url: string): boolean => {
    try {
      decodeURIComponent(url);
      return true;
    } catch {
      return false;
    }
  };

  it('never resolves a path with a dot segment, an encoded separator or bad percent-encoding: those are 400 and never forwarded', () => {
    fc.assert(
      fc.property(path, fc.constantFrom('GET', 'POST', 'DELETE', 'PUT'), (url, method) => {
        const segments = url.split('/');
        const unsafe = url.includes('\\') || !decodes(url) || segments.some((s) => /^(?:\.|%(?:25)*2e){1,2}$/i.test(s) || /%(?:25)*(?:2f|5c)/i.test(s)) || /%(?:25)*00/.test(url);
        try {
          const route = resolveRoute(table, method, url);
          expect(unsafe).toBe(false);
          // What resolves is one of the table's templates, with each {param} one plain segment.
          expect(route.template.startsWith('/v1/preview/models')).toBe(true);
        } catch (err) {
          expect(err).toBeInstanceOf(GatewayError);
          const { status, code } = err as GatewayError;
          if (unsafe) expect([status, code]).toEqual([400, 'invalid_path']);
          else expect([404, 405]).toContain(status);
        }
      }),
      { numRuns: 3000 },
    );
  });
});
