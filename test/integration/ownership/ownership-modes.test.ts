import request from 'supertest';
import { describe, expect, it } from 'vitest';
import { startStack } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';

const teamA = { authorization: bearer(KEYS.teamA) };
const teamB = { authorization: bearer(KEYS.teamB) };

describe('ownership.mode', () => {
  it('is off by default in passthrough mode: each team uses its own upstream key, and the upstream decides', async () => {
    const stack = await startStack();
    try {
      const created = await request(stack.gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'n', base_model: 'b' });
      const res = await request(stack.gw.url).get(`/v1/preview/models/${created.body.id as string}/checkpoints`).set(teamB);
      expect(res.status).toBe(200);
      expect(stack.service.last.headers.authorization).toBe(bearer(KEYS.teamB));
    } finally {
      await stack.close();
    }
  });

  it('is on with mode: on in passthrough mode too', async () => {
    const stack = await startStack({ ownership: { mode: 'on' } });
    try {
      const created = await request(stack.gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'n', base_model: 'b' });
      expect((await request(stack.gw.url).get(`/v1/preview/models/${created.body.id as string}/checkpoints`).set(teamB)).status).toBe(404);
    } finally {
      await stack.close();
    }
  });

  it('is off with mode: off even when every team shares one upstream key', async () => {
    const stack = await startStack({ ownership: { mode: 'off' }, upstreams: { service: { auth: { bearer: 'shared' } } } });
    try {
      expect((await request(stack.gw.url).get('/v1/preview/training-jobs/anything').set(teamB)).status).toBe(200);
    } finally {
      await stack.close();
    }
  });

  it('lets unknown resources through with unknown: allow, and still refuses another team\'s', async () => {
    const stack = await startStack({ ownership: { mode: 'on', unknown: 'allow' } });
    try {
      expect((await request(stack.gw.url).get('/v1/preview/training-jobs/made-elsewhere').set(teamB)).status).toBe(200);
      const created = await request(stack.gw.url).post('/v1/preview/models').set(teamA).send({ entity: 'acme', project: 'p', name: 'n', base_model: 'b' });
      expect((await request(stack.gw.url).get(`/v1/preview/models/${created.body.id as string}/checkpoints`).set(teamB)).status).toBe(404);
    } finally {
      await stack.close();
    }
  });
});
