import { once } from 'node:events';
import { request as httpRequest, type ClientRequest, type IncomingMessage, type OutgoingHttpHeaders } from 'node:http';
import type { FakeUpstream, HeldStream } from '../fixtures/fake-upstream.js';

/** POSTs a body as separate chunked writes (no Content-Length); resolves with the status. */
export function postChunked(port: number, path: string, headers: OutgoingHttpHeaders, parts: readonly string[]): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const req = httpRequest({ host: '127.0.0.1', port, path, method: 'POST', headers: { ...headers, 'transfer-encoding': 'chunked' } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    for (const part of parts) req.write(part);
    req.end();
  });
}

/** A streamed chat request the fixture holds after its first event (`x-fixture-mode: stream-hold`). */
export interface HeldChat {
  readonly req: ClientRequest;
  readonly res: IncomingMessage;
  /** The upstream side: write `held.rest` and end it to let the stream finish. */
  readonly held: HeldStream;
}

export async function openHeldChat(port: number, headers: OutgoingHttpHeaders, body: string, service: FakeUpstream): Promise<HeldChat> {
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    path: '/v1/chat/completions',
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json', 'x-fixture-mode': 'stream-hold' },
  });
  req.on('error', () => undefined);
  req.end(body);
  const held = await service.nextHeld();
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  return { req, res, held };
}
