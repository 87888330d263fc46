import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utcDay } from '../../../src/calendar.js';
import { startStack } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { openHeldChat, type HeldChat } from '../../helpers/raw-http.js';

const TPM_KEY = 'tg-test-tpm-key-aaaaaaaaaaaaaaaaaa';
const HONEST_KEY = 'tg-test-honest-key-bbbbbbbbbbbbbbbb';
const LEAVING_KEY = 'tg-test-leaving-key-cccccccccccccccc';
const admin = { authorization: bearer(KEYS.admin) };

/** The `data:` payload of one SSE event string. */
const dataOf = (event: string): string => event.slice('data: '.length).trimEnd();

/** The upstream writes `events`; the client reads until `marker` reached it, then leaves. Resolves once the upstream's response has closed. */
async function leaveAfter({ req, res, held }: HeldChat, events: readonly string[], marker: string): Promise<void> {
  let received = '';
  res.on('data', (chunk: Buffer) => (received += chunk.toString()));
  for (const event of events) held.res.write(event);
  while (!received.includes(marker)) await once(res, 'data');
  req.destroy();
  await once(held.res, 'close');
}

/** SPEC 6.4: a stream that ends without usage is still charged; usage the gateway read is charged whatever the client does next. */
describe('streams that do not finish', () => {
  let stack: Awaited<ReturnType<typeof startStack>>;
  beforeAll(async () => {
    stack = await startStack({
      auth: {
        keys: [
          ...KEY_ENTRIES,
          { id: 'tpm-bot', sha256: digest(TPM_KEY), team: 'team-a', limits: { tpm: 10_000 } },
          { id: 'honest', sha256: digest(HONEST_KEY), team: 'team-a', limits: { tokensPerDay: 100 } },
          { id: 'leaving', sha256: digest(LEAVING_KEY), team: 'team-a', limits: { tokensPerDay: 100 } },
        ],
        admin: { keys: ADMIN_ENTRIES },
      },
    });
  });
  afterAll(async () => {
    await stack.close();
  });

  const body = (extra: Record<string, unknown> = {}): string =>
    JSON.stringify({ model: 'OpenPipe/Qwen3-14B-Instruct', messages: [{ role: 'user', content: 'hi' }], max_tokens: 100, stream: true, ...extra });

  const ledgerRow = async (requestId: string): Promise<Record<string, unknown>> => {
    await stack.gw.gateway.settled();
    const today = utcDay();
    const page = await request(stack.gw.url).get(`/admin/usage/requests?from=${today}&to=${today}&limit=1000`).set(admin);
    return (page.body.data as Array<Record<string, unknown>>).find((row) => row.request_id === requestId)!;
  };

  it('charges a stream aborted after 2 of 3 chunks an estimate, marked estimated, and the next request shows it', async () => {
    const chat = await openHeldChat(stack.gw.port, { authorization: bearer(TPM_KEY), 'x-request-id': 'aborted-after-two' }, body(), stack.service);
    // Both content chunks reached the client before it leaves.
    await leaveAfter(chat, chat.held.rest.slice(0, 2), 'tok1');
    const row = await ledgerRow('aborted-after-two');
    // Prompt: "hi" is 1 token by the 6.3 estimate; completion: max(2 chunks, 10 bytes / 4 = 3).
    expect(row).toMatchObject({ status: 200, estimated: true, prompt_tokens: 1, completion_tokens: 3, total_tokens: 4, key: 'tpm-bot' });
    const next = await request(stack.gw.url).get('/v1/models').set('authorization', bearer(TPM_KEY));
    // 10,000 − 4 charged; /v1/models reserves no tokens.
    expect(next.headers['x-ratelimit-remaining-tokens']).toBe('9996');
  });

  it('charges the usage a client left right after reading, not an estimate', async () => {
    const chat = await openHeldChat(
      stack.gw.port,
      { authorization: bearer(KEYS.teamA), 'x-request-id': 'left-after-usage', 'x-fixture-usage': '40,9' },
      body({ stream_options: { include_usage: true } }),
      stack.service,
    );
    await leaveAfter(chat, chat.held.rest.slice(0, -1), '"prompt_tokens":40');
    expect(await ledgerRow('left-after-usage')).toMatchObject({ estimated: false, prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 });
  });

  /** Sends streams until refused; `leave`: read up to the usage chunk, then go. Answers how many were admitted. */
  async function admittedUntilRefused(key: string, leave: boolean): Promise<number> {
    let admitted = 0;
    for (let i = 0; i < 20; i++) {
      const headers = { authorization: bearer(key), 'x-fixture-usage': '10,8' };
      const payload = body({ max_tokens: 1, stream_options: { include_usage: true } });
      if (!leave) {
        const res = await request(stack.gw.url).post('/v1/chat/completions').set(headers).set('content-type', 'application/json').send(payload);
        if (res.status !== 200) break;
        admitted += 1;
        continue;
      }
      const req = httpRequest({ host: '127.0.0.1', port: stack.gw.port, path: '/v1/chat/completions', method: 'POST', headers: { ...headers, 'content-type': 'application/json', 'x-fixture-mode': 'stream-hold' } });
      req.on('error', () => undefined);
      req.end(payload);
      const [res] = (await once(req, 'response')) as [IncomingMessage];
      if (res.statusCode !== 200) {
        res.resume();
        break;
      }
      const held = await stack.service.nextHeld();
      admitted += 1;
      await leaveAfter({ req, res, held }, held.rest.slice(0, -1), dataOf(held.rest.at(-2)!));
      await stack.gw.gateway.settled();
    }
    return admitted;
  }

  it('gives a client that leaves right after the usage chunk no more than an honest one (tokensPerDay: 100, 18-token replies)', async () => {
    const honest = await admittedUntilRefused(HONEST_KEY, false);
    const leaving = await admittedUntilRefused(LEAVING_KEY, true);
    expect(honest).toBe(6);
    expect(leaving).toBe(honest);
  });
});
