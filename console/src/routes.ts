import { useEffect, useState } from 'preact/hooks';

/** The pages of SPEC 17, in navigation order, with exactly these names. */
export const PAGES = ['Overview', 'Teams', 'Keys', 'Usage', 'Requests', 'Audit', 'Resources', 'Models', 'Settings'] as const;
export type PageName = (typeof PAGES)[number];

export interface Route {
  readonly page: PageName;
  /** What follows the page in the hash: a team's id on `#/teams/<id>`. */
  readonly detail: string | null;
}

/** `#/teams/team-a` → Teams, team-a. The hash keeps the server side to one file (index.html) and survives reloads. */
export function parseRoute(hash: string): Route {
  const [slug = '', ...rest] = hash.replace(/^#\/?/, '').split('/');
  const page = PAGES.find((name) => name.toLowerCase() === slug.toLowerCase()) ?? 'Overview';
  const detail = rest.length > 0 && rest[0] !== '' ? decodeURIComponent(rest.join('/')) : null;
  return { page, detail };
}

export const hrefOf = (page: PageName, detail?: string): string => `#/${page.toLowerCase()}${detail === undefined ? '' : `/${encodeURIComponent(detail)}`}`;

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const changed = (): void => setRoute(parseRoute(location.hash));
    addEventListener('hashchange', changed);
    return () => removeEventListener('hashchange', changed);
  }, []);
  return route;
}
