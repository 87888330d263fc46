export { ConsoleSessions, csrfMatches, SESSION_LIFETIME_SECONDS, type LiveSession, type NewSession } from './console-sessions.js';
export { cookieValue, SESSION_COOKIE, sessionCookie, sessionTokenOf } from './cookie.js';
