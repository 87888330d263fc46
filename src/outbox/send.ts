import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';

/** What one POST to a receiver came to: 2xx is delivered; anything else (3xx included) failed. */
export interface SendResult {
  readonly ok: boolean;
  /** The receiver's status, null when none came (refused, reset, timed out). */
  readonly status: number | null;
  /** Why it failed, in a few words (never the request's headers: they carry secrets). */
  readonly error: string | null;
}

export interface Outgoing {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

/** Bytes of a receiver's answer read at most: the body is never needed, only drained; a longer answer is a failure. */
const MAX_RESPONSE_BYTES = 64 * 1024;

/**
 * POSTs `body` once. A redirect is a failure and never followed (it could lead anywhere, with
 * the signature); at most MAX_RESPONSE_BYTES of the answer are read; the whole exchange is
 * bounded by `timeoutMs`. Never rejects.
 */
export function send(outgoing: Outgoing, timeoutMs: number): Promise<SendResult> {
  return new Promise((resolve) => {
    const request = outgoing.url.protocol === 'https:' ? httpsRequest : httpRequest;
    let settled = false;
    const finish = (result: SendResult): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      req.destroy();
      resolve(result);
    };
    const req = request(outgoing.url, { method: 'POST', headers: { ...outgoing.headers, 'content-length': Buffer.byteLength(outgoing.body) } }, (res) => {
      const status = res.statusCode ?? 0;
      const ok = status >= 200 && status < 300;
      const error = ok ? null : status >= 300 && status < 400 ? `redirect ${status} (not followed)` : `status ${status}`;
      let read = 0;
      res.on('data', (chunk: Buffer) => {
        read += chunk.length;
        // An answer this large is not a receiver acknowledging an event: stop reading, count it failed.
        if (read > MAX_RESPONSE_BYTES) finish({ ok: false, status, error: `answer larger than ${MAX_RESPONSE_BYTES} bytes` });
      });
      res.on('end', () => finish({ ok, status, error }));
      res.on('error', () => finish({ ok, status, error }));
    });
    const timer = setTimeout(() => finish({ ok: false, status: null, error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    req.on('error', (err: NodeJS.ErrnoException) => finish({ ok: false, status: null, error: err.code ?? err.message }));
    req.end(outgoing.body);
  });
}
