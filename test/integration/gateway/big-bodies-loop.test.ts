import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hostileBodies } from '../../fixtures/hostile-bodies/hostile-body-cases.js';
import { startGateway, testConfig, type RunningGateway } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

/** SPEC 5's bound: while a costly body is handled, another client waits at most this long. */
const LOOP_BOUND_MS = 50;
// As the bench does: this process's own garbage (the test bodies) is collected before each
// measured round, so a pause seen is the gateway's handling of the body.
setFlagsFromString('--expose-gc');
const gc = runInNewContext('gc') as () => void;
const sha = (bytes: Buffer | Uint8Array): string => createHash('sha256').update(bytes).digest('hex');

/**
 * The 10 MB bodies of the security review through the gateway's own HTTP path (read, checked,
 * forwarded), the loop's delay sampled every millisecond as bench/hostile-bodies does. That
 * bench hands the checker a body already in one buffer, so the copies made while reading it
 * (and again for the worker) were never measured: 66–77 ms once they came back.
 */
describe('big chat bodies and the event loop', () => {
  let gw: RunningGateway;
  let upstream: Server;
  const arrived: string[] = [];
  beforeAll(async () => {
    // Drains and hashes: an upstream that parsed 10 MB would stall this process, not the gateway.
    upstream = createServer((req, res) => {
      const hash = createHash('sha256');
      req.on('data', (chunk: Buffer) => hash.update(chunk));
      req.on('end', () => {
        arrived.push(hash.digest('hex'));
        res.setHeader('content-type', 'application/json');
        res.end('{"id":"c","object":"chat.completion","choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1,"total_tokens":2}}');
      });
    });
    upstream.listen(0, '127.0.0.1');
    await once(upstream, 'listening');
    const url = `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`;
    gw = await startGateway(testConfig({ service: url, inference: url }));
  });
  afterAll(async () => {
    await gw.close();
    upstream.close();
  });

  const post = (body: Buffer, chunked: boolean) =>
    new Promise<{ status: number; text: string }>((resolve, reject) => {
      const length = chunked ? {} : { 'content-length': body.length };
      const req = request(`${gw.url}/v1/chat/completions`, { method: 'POST', headers: { authorization: bearer(KEYS.teamA), 'openai-project': 'team-a/big', 'content-type': 'application/json', ...length } }, (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (part: string) => (text += part));
        res.on('end', () => resolve({ status: res.statusCode!, text }));
      });
      req.on('error', reject);
      if (chunked) for (let at = 0; at < body.length; at += 1 << 20) req.write(body.subarray(at, at + (1 << 20)));
      req.end(chunked ? undefined : body);
    });

  /** The longest loop delay while the gateway handles `body`, and its answer. */
  async function handled(body: Buffer, chunked: boolean) {
    gc();
    const delay = monitorEventLoopDelay({ resolution: 1 });
    delay.enable();
    const answer = await post(body, chunked);
    delay.disable();
    return { ...answer, maxDelayMs: delay.max / 1e6 };
  }

  const cases = hostileBodies().filter(({ name }) => name === '9.9 MB valid (short messages)' || name === '8 MB without model');
  for (const { name, body } of cases) {
    for (const chunked of [false, true]) {
      it(`holds the loop under ${LOOP_BOUND_MS} ms while it handles ${name}${chunked ? ', chunked' : ''}; the very bytes are forwarded or a 422 answered`, async () => {
        await handled(body, chunked); // the first of a kind also pays for JIT and the worker's start
        const rounds = [];
        for (let round = 0; round < 3; round++) rounds.push(await handled(body, chunked));
        const valid = name.includes('valid');
        for (const { status, text } of rounds) {
          expect(status).toBe(valid ? 200 : 422);
          if (!valid) expect(JSON.parse(text).detail[0]).toMatchObject({ type: 'missing', loc: ['body', 'model'] });
        }
        if (valid) expect(arrived.slice(-3)).toEqual([sha(body), sha(body), sha(body)]);
        expect(rounds.map((round) => round.maxDelayMs).filter((ms) => ms > LOOP_BOUND_MS)).toEqual([]);
      });
    }
  }
});
