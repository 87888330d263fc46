import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import { ApiError, listenToApi, prefetch, signOut, setCsrfToken, type Session } from './api.js';
import { AuditPage } from './pages/audit.js';
import { KeysPage } from './pages/keys.js';
import { ModelsPage } from './pages/models.js';
import { OVERVIEW_READ, OverviewPage } from './pages/overview.js';
import { RequestsPage } from './pages/requests.js';
import { ResourcesPage } from './pages/resources.js';
import { SettingsPage } from './pages/settings.js';
import { SignIn } from './pages/sign-in.js';
import { TeamsPage } from './pages/teams.js';
import { UsagePage } from './pages/usage.js';
import { hrefOf, PAGES, parseRoute, useRoute, type Route } from './routes.js';

/** Where the shell stands: asking the gateway whether a session exists, signed out, or signed in. */
type State = { readonly phase: 'checking' } | { readonly phase: 'signed-out'; readonly notice: string | null } | { readonly phase: 'signed-in'; readonly session: Session };

function Page({ route, session }: { readonly route: Route; readonly session: Session }) {
  switch (route.page) {
    case 'Overview':
      return <OverviewPage />;
    case 'Teams':
      return <TeamsPage session={session} teamId={route.detail} />;
    case 'Keys':
      return <KeysPage session={session} />;
    case 'Usage':
      return <UsagePage session={session} />;
    case 'Requests':
      return <RequestsPage session={session} />;
    case 'Audit':
      return <AuditPage />;
    case 'Resources':
      return <ResourcesPage session={session} />;
    case 'Models':
      return <ModelsPage />;
    case 'Settings':
      return <SettingsPage session={session} />;
  }
}

const roleInWords = (session: Session): string => (session.role === 'team-admin' ? `team-admin of ${session.team ?? '?'}` : session.role);

function Shell({ session, onSignOut, databaseDown }: { readonly session: Session; readonly onSignOut: () => void; readonly databaseDown: boolean }) {
  const route = useRoute();
  const main = useRef<HTMLElement>(null);
  useEffect(() => {
    document.title = `${route.page} · Tollgate console`;
  }, [route.page]);
  return (
    <>
      <a class="skip" href="#main" onClick={(event) => (event.preventDefault(), main.current?.focus())}>Skip to content</a>
      <header class="top">
        <span class="brand">Tollgate</span>
        <nav aria-label="Pages">
          <ul>
            {PAGES.map((page) => (
              <li key={page}>
                <a href={hrefOf(page)} aria-current={route.page === page ? 'page' : undefined}>{page}</a>
              </li>
            ))}
          </ul>
        </nav>
        <div class="who">
          <span>{session.person?.email ?? session.person?.name ?? session.keyId} · {roleInWords(session)}</span>
          <button type="button" class="secondary" onClick={onSignOut}>Sign out</button>
        </div>
      </header>
      {databaseDown && (
        <div class="banner" role="alert">The gateway's database cannot be reached right now: usage, keys and audit data may be missing or stale. Retry shortly.</div>
      )}
      <main id="main" ref={main} tabIndex={-1}>
        <h1>{route.page}</h1>
        <Page route={route} session={session} />
      </main>
    </>
  );
}

/** The shell; `session` is the answer of GET /admin/session, asked before the first render. */
export function App({ session }: { readonly session: Promise<Session> }) {
  const [state, setState] = useState<State>({ phase: 'checking' });
  const [databaseDown, setDatabaseDown] = useState(false);
  // A layout effect: run at once after the first render, not after the first frame (which a new page can be slow to paint), so the session's answer is not kept waiting.
  useLayoutEffect(() => {
    listenToApi({
      sessionEnded: () => {
        setCsrfToken(null);
        setState({ phase: 'signed-out', notice: 'Your session has ended. Sign in again.' });
      },
      databaseDown: setDatabaseDown,
    });
    // A reloaded page continues its session: the cookie is HttpOnly, the answer carries the CSRF token again.
    session.then(
      (live) => signedIn(live),
      (err: unknown) => {
        // Answered before the listener above was set: its banner is raised here.
        if (err instanceof ApiError && err.status === 503 && err.code === 'database_unavailable') setDatabaseDown(true);
        setState({ phase: 'signed-out', notice: null });
      },
    );
  }, []);
  const signedIn = (live: Session): void => {
    setCsrfToken(live.csrfToken);
    // The landing page's read starts with the sign-in's answer, while the shell renders.
    if (parseRoute(location.hash).page === 'Overview') prefetch(OVERVIEW_READ);
    setState({ phase: 'signed-in', session: live });
  };
  const leave = (): void => {
    const atIdentityProvider = state.phase === 'signed-in' ? state.session.signOutUrl : null;
    void signOut()
      .catch(() => undefined)
      .then(() => {
        setCsrfToken(null);
        // A person signed in through the IdP signs out there too (SPEC 25), which sends them back here.
        if (typeof atIdentityProvider === 'string') return location.assign(atIdentityProvider);
        setState({ phase: 'signed-out', notice: 'Signed out.' });
      });
  };
  if (state.phase === 'checking') return <p class="loading" role="status">Loading…</p>;
  if (state.phase === 'signed-out') return <SignIn notice={state.notice} onSignedIn={signedIn} databaseDown={databaseDown} />;
  return <Shell session={state.session} onSignOut={leave} databaseDown={databaseDown} />;
}
