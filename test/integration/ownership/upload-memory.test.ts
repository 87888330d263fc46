import { readFileSync } from 'node:fs';
import { once } from 'node:events';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { startTrainingService } from '../../fixtures/training-service.js';
import { bearer, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { freePort } from '../../helpers/ports.js';
import { startGatewayProcess, writeTempConfig } from '../../helpers/process.js';

const MB = 1024 ** 2;
const UPLOAD_BYTES = Number(process.env.UPLOAD_MB ?? 150) * MB;

/** The resident memory of a process, from /proc (Linux). */
const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) * 1024;

/** Writes `bytes` of trajectory JSON after a head and before a tail, honouring backpressure. */
async function streamJob(port: number, head: string, tail: string, bytes: number): Promise<IncomingMessage> {
  const req = httpRequest({
    host: '127.0.0.1',
    port,
    path: '/v1/preview/training-jobs',
    method: 'POST',
    headers: { authorization: bearer(KEYS.teamA), 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
  });
  const response = once(req, 'response') as Promise<[IncomingMessage]>;
  // Writes made before the socket connects are queued without 'drain' ever following: connect first.
  req.flushHeaders();
  const [socket] = (await once(req, 'socket')) as [Socket];
  if (socket.connecting) await once(socket, 'connect');
  const group = `${JSON.stringify({ trajectories: [{ messages_and_choices: [{ role: 'user', content: 'y'.repeat(60_000) }], reward: 1 }] })},`;
  const chunk = Buffer.from(group.repeat(Math.floor(MB / group.length)));
  req.write(head);
  for (let sent = 0; sent < bytes; sent += chunk.length) {
    if (!req.write(chunk)) await once(req, 'drain');
  }
  req.end(`${group.slice(0, -1)}${tail}`);
  return (await response)[0];
}

// With ownership on, a job body is held back only until its model_id has been read and checked
// (SPEC 13.1), then streams on, read as it passes with its last chunk kept back until the end.
describe.each([['on'], ['off']])('a 150 MB training-job upload with ownership %s and a shared upstream key', (mode) => {
  it('streams through with the gateway\'s memory flat (model_id first)', async () => {
    const service = await startTrainingService();
    const port = await freePort();
    const yaml = `server: { host: 127.0.0.1, streamBodyLimit: 300mb }
upstreams: { service: { url: "${service.url}", auth: { bearer: shared } }, inference: { url: "${service.url}" } }
ownership: { mode: ${mode} }
auth: { keys: ${JSON.stringify(KEY_ENTRIES)} }
`;
    const proc = startGatewayProcess({ TOLLGATE_CONFIG: writeTempConfig(yaml), PORT: String(port) });
    try {
      await proc.waitFor('tollgate listening');
      const created = await fetch(`http://127.0.0.1:${port}/v1/preview/models`, {
        method: 'POST',
        headers: { authorization: bearer(KEYS.teamA), 'content-type': 'application/json' },
        body: JSON.stringify({ entity: 'acme', project: 'p', name: 'big', base_model: 'b' }),
      });
      const modelId = ((await created.json()) as { id: string }).id;
      // Warm the path once, then measure the resident size while the big upload flows.
      (await streamJob(port, `{"model_id":"${modelId}","trajectory_groups":[`, ']}', 2 * MB)).resume();
      const pid = proc.child.pid!;
      const before = rssOf(pid);
      let peak = before;
      const sampler = setInterval(() => (peak = Math.max(peak, rssOf(pid))), 25);
      const res = await streamJob(port, `{"model_id":"${modelId}","trajectory_groups":[`, ']}', UPLOAD_BYTES);
      res.resume();
      await once(res, 'end');
      clearInterval(sampler);
      expect(res.statusCode).toBe(200);
      expect(service.last.bodyLength).toBeGreaterThan(UPLOAD_BYTES);
      console.log(`gateway RSS during a ${UPLOAD_BYTES / MB} MB upload: ${(before / MB).toFixed(1)} MB before, peak ${(peak / MB).toFixed(1)} MB (+${((peak - before) / MB).toFixed(1)} MB)`);
      expect(peak - before).toBeLessThan(50 * MB);
    } finally {
      proc.kill('SIGKILL');
      await proc.exited();
      await service.close();
    }
  }, 120_000);
});
