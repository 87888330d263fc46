import request from 'supertest';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { NotificationEvent } from '../../../src/outbox/index.js';
import { startStack } from '../../helpers/gateway.js';
import { ADMIN_ENTRIES, bearer, digest, KEY_ENTRIES, KEYS } from '../../helpers/keys.js';
import { eventually } from '../../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../fixtures/webhook-receiver.js';

const SECRET = 'a-webhook-secret-of-32-bytes-xyz';
const LEAD = 'tg-test-team-b-lead-eeeeeeeeeeeeeeee';
const VIEWER = 'tg-test-viewer-key-ffffffffffffffffff';

/** The recipe docs/notifications.md shows (the docs check keeps the page and this file equal), run as a receiver would. */
const RECIPE = new URL('../../../docs/examples/verify-signature.mjs', import.meta.url).href;
const { verifyTollgateSignature } = (await import(RECIPE)) as { verifyTollgateSignature: (secret: string, header: unknown, rawBody: string) => boolean };
type Stack = Awaited<ReturnType<typeof startStack>>;

/** Short waits, so that retries happen within a test; the values are what the receivers see, never timed. */
const DELIVERY = { pollMs: 50, leaseMs: 5000, backoffMs: 20, maxBackoffMs: 100, maxAttempts: 4, timeoutMs: 500, exportSettleMs: 0 };

function event(n: number, type: NotificationEvent['type'] = 'budget.threshold', team = 'team-a'): NotificationEvent {
  return { id: `evt-${n}`, type, time: '2026-11-29T00:00:00.000Z', team, data: { scope: `team:${team}`, fraction: 0.8, n } };
}

const ids = (receiver: WebhookReceiver): string[] => receiver.received.map((r) => (JSON.parse(r.body) as { id: string }).id);
const admin = (stack: Stack, path: string) => request(stack.gw.url).get(path).set('authorization', bearer(KEYS.admin));

interface Listed {
  event_id: string;
  state: string;
  attempts: number;
  last_error: string | null;
}

/** The finance deliveries as /admin/notifications lists them. */
async function deliveries(stack: Stack): Promise<Listed[]> {
  return (await admin(stack, '/admin/notifications?sink=finance')).body.data as Listed[];
}

/** The deliverer records an attempt after the receiver has answered: wait for the record. */
async function deliveryIn(stack: Stack, eventId: string, state: string): Promise<Listed> {
  let found: Listed | undefined;
  await eventually(async () => {
    found = (await deliveries(stack)).find((d) => d.event_id === eventId && d.state === state);
    return found !== undefined;
  });
  return found!;
}

describe('webhooks from the outbox (SPEC 24)', () => {
  let receiver: WebhookReceiver;
  let slack: WebhookReceiver;
  let stack: Stack;
  beforeAll(async () => {
    receiver = await startWebhookReceiver('down');
    slack = await startWebhookReceiver('ok');
    stack = await startStack({
      auth: {
        keys: KEY_ENTRIES,
        admin: { keys: [...ADMIN_ENTRIES, { id: 'lead-b', sha256: digest(LEAD), role: 'team-admin', team: 'team-b' }, { id: 'viewer', sha256: digest(VIEWER), role: 'viewer' }] },
      },
      notifications: {
        webhooks: [
          { name: 'finance', url: `${receiver.url}/hook?token=t0ps3cret`, events: ['budget.*', 'notification.test'], format: 'json', secret: SECRET },
          { name: 'ops-slack', url: slack.url, events: ['budget.exhausted'], format: 'slack' },
        ],
        delivery: DELIVERY,
      },
    });
  });
  afterAll(async () => {
    await stack.close();
    await Promise.all([receiver.close(), slack.close()]);
  });
  afterEach(() => {
    receiver.mode = 'ok';
  });

  it('delivers every event once by id after the receiver was down a while, signed as the documented recipe checks', async () => {
    const published = [1, 2, 3, 4, 5].map((n) => event(n));
    for (const e of published) stack.gw.gateway.events.publish(e);
    // Published twice (as a second instance would): stored once.
    for (const e of published) stack.gw.gateway.events.publish(e);
    await receiver.waitForRequests(5);
    receiver.mode = 'ok';
    await receiver.waitUntil(() => new Set(ids(receiver)).size === 5);
    for (const e of published) await deliveryIn(stack, e.id, 'delivered');
    const list = await admin(stack, '/admin/notifications?sink=finance&state=delivered');
    expect(list.status).toBe(200);
    expect(list.headers['cache-control']).toBe('no-store');
    expect(list.body.data.map((d: { event_id: string }) => d.event_id).sort()).toEqual(published.map((e) => e.id).sort());
    const ok = receiver.received.filter((r) => JSON.parse(r.body).id === 'evt-3').at(-1)!;
    expect(ok.headers['content-type']).toBe('application/json');
    expect(ok.path).toBe('/hook?token=t0ps3cret');
    expect(JSON.parse(ok.body)).toEqual({ id: 'evt-3', type: 'budget.threshold', time: '2026-11-29T00:00:00.000Z', data: { scope: 'team:team-a', fraction: 0.8, n: 3 } });
    expect(verifyTollgateSignature(SECRET, ok.headers['x-tollgate-signature'], ok.body)).toBe(true);
    expect(verifyTollgateSignature('another-secret-of-some-length', ok.headers['x-tollgate-signature'], ok.body)).toBe(false);
    expect(verifyTollgateSignature(SECRET, ok.headers['x-tollgate-signature'], ok.body.replace('0.8', '0.9'))).toBe(false);
    // Slack takes only budget.exhausted: nothing came.
    expect(slack.received).toEqual([]);
  });

  it('sends slack text for budget.exhausted', async () => {
    stack.gw.gateway.events.publish({
      id: 'budget/project/team-a/prod/costPerMonth/2026-11-01/1',
      type: 'budget.exhausted',
      time: '2026-11-29T00:00:00.000Z',
      team: 'team-a',
      data: {
        scope: { type: 'project', team: 'team-a', project: 'prod' },
        limit: 'costPerMonth',
        window: { start: '2026-11-01T00:00:00.000Z', end: '2026-12-01T00:00:00.000Z' },
        budget: 2000,
        spent: 2000.25,
        unit: 'USD',
        threshold: 1,
        soft: true,
      },
    });
    await slack.waitForRequests(1);
    expect(JSON.parse(slack.received[0]!.body)).toEqual({
      text: 'Tollgate budget.exhausted: project team-a/prod reached 100% of its costPerMonth budget (2000.25 of 2000 USD) (soft: still serving)',
    });
    expect(slack.received[0]!.headers['x-tollgate-signature']).toBeUndefined();
  });

  it.each(['redirect', 'huge', 'hang'] as const)('counts a receiver that answers %s as failed, then dead after maxAttempts, and never slows /v1', async (mode) => {
    const target = await startWebhookReceiver('ok');
    receiver.mode = mode;
    receiver.redirectTo = target.url;
    const e = event(100 + ['redirect', 'huge', 'hang'].indexOf(mode));
    stack.gw.gateway.events.publish(e);
    await receiver.waitUntil(() => ids(receiver).filter((id) => id === e.id).length >= 1);
    const chat = await request(stack.gw.url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).send({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    const dead = await deliveryIn(stack, e.id, 'dead');
    expect(dead.attempts).toBe(4);
    expect(dead.last_error).toBe({ redirect: 'redirect 307 (not followed)', huge: 'answer larger than 65536 bytes', hang: 'no answer within 500 ms' }[mode]);
    expect(target.received).toEqual([]);
    await target.close();
    // Retried by an admin: due at once, delivered now that the receiver answers.
    receiver.mode = 'ok';
    const retried = await request(stack.gw.url).post(`/admin/notifications/finance:${e.id}/retry`).set('authorization', bearer(KEYS.admin));
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ id: `finance:${e.id}`, state: 'pending', attempts: 0 });
    await deliveryIn(stack, e.id, 'delivered');
  });

  it('sends a test notification (admin only) and shows each sink without secrets', async () => {
    const sent = await request(stack.gw.url).post('/admin/notifications/test').set('authorization', bearer(KEYS.admin));
    expect(sent.status).toBe(202);
    expect(sent.body).toEqual({ id: expect.stringMatching(/^test-/), type: 'notification.test' });
    await receiver.waitUntil(() => ids(receiver).includes(sent.body.id));
    const list = await admin(stack, '/admin/notifications');
    expect(list.body.sinks.map((s: { name: string; url: string; kind: string; format: string }) => [s.name, s.kind, s.url, s.format])).toEqual([
      ['finance', 'webhook', receiver.url, 'json'],
      ['ops-slack', 'webhook', slack.url, 'slack'],
    ]);
    expect(JSON.stringify(list.body)).not.toContain(SECRET);
    expect(JSON.stringify(list.body)).not.toContain('t0ps3cret');
    const config = await admin(stack, '/admin/config');
    expect(JSON.stringify(config.body)).not.toContain(SECRET);
    const unknown = await request(stack.gw.url).post('/admin/notifications/nope/retry').set('authorization', bearer(KEYS.admin));
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatchObject({ code: 'notification_not_found', param: 'id', message: 'No notification delivery with id "nope".' });
    const bad = await admin(stack, '/admin/notifications?state=lost');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatchObject({ param: 'state' });
  });

  it('shows a team-admin its own team\'s deliveries only, and lets a viewer read but not write', async () => {
    stack.gw.gateway.events.publish(event(200, 'budget.threshold', 'team-b'));
    await deliveryIn(stack, 'evt-200', 'delivered');
    const asLead = await request(stack.gw.url).get('/admin/notifications?limit=1000').set('authorization', bearer(LEAD));
    expect(asLead.status).toBe(200);
    expect(asLead.body.data.map((d: Listed) => d.event_id)).toEqual(['evt-200']);
    const other = await request(stack.gw.url).get('/admin/notifications?team=team-a').set('authorization', bearer(LEAD));
    expect(other.body.data).toEqual([]);
    const retryOther = await request(stack.gw.url).post('/admin/notifications/finance:evt-1/retry').set('authorization', bearer(LEAD));
    expect(retryOther.status).toBe(404);
    const asViewer = await request(stack.gw.url).get('/admin/notifications?team=team-a&limit=1000').set('authorization', bearer(VIEWER));
    expect(asViewer.status).toBe(200);
    expect(asViewer.body.data.length).toBeGreaterThan(0);
    const viewerRetry = await request(stack.gw.url).post('/admin/notifications/finance:evt-1/retry').set('authorization', bearer(VIEWER));
    expect(viewerRetry.status).toBe(403);
    expect(viewerRetry.body.error.code).toBe('insufficient_role');
    const viewerTest = await request(stack.gw.url).post('/admin/notifications/test').set('authorization', bearer(VIEWER));
    expect(viewerTest.status).toBe(403);
  });
});
