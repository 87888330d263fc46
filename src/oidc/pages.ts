import type { Response } from 'express';

const ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
const escapeHtml = (text: string): string => text.replace(/[&<>"']/g, (c) => ESCAPES[c]!);

/**
 * The page a browser lands on when a sign-in through the identity provider ends without a
 * session (SPEC 25): what happened in words, and the way back to the console. A page, not JSON:
 * a person reads it, after a top-level redirect from the IdP. No script, no framing, no caching.
 */
export function sendSignInPage(res: Response, status: number, title: string, detail: string): void {
  res
    .status(status)
    .set({
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 'no-store',
      'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'",
      'referrer-policy': 'no-referrer',
      'x-content-type-options': 'nosniff',
    })
    .send(
      `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escapeHtml(title)} · Tollgate console</title>` +
        '<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1b1f24}h1{font-size:1.4rem}</style></head>' +
        `<body><main><h1>${escapeHtml(title)}</h1><p id="reason">${escapeHtml(detail)}</p>` +
        '<p><a href="/console/">Back to the console sign-in</a></p></main></body></html>',
    );
}
