import type { Browser } from 'playwright-core';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startInferenceHost } from '../fixtures/inference-host.js';
import { startTrainingService, type FakeUpstream } from '../fixtures/training-service.js';
import { startWebhookReceiver, type WebhookReceiver } from '../fixtures/webhook-receiver.js';
import { startGateway, testConfig, type RunningGateway } from '../helpers/gateway.js';
import { bearer, KEYS } from '../helpers/keys.js';
import { eventually } from '../helpers/wait.js';
import { buildConsole, launchChromium, signIn, visit, Watched } from './console-harness.js';

/** SPEC 24: the console shows each notification sink's health under Settings. */
describe('the Notifications section of Settings, in Chromium', () => {
  let browser: Browser;
  let gw: RunningGateway;
  let down: WebhookReceiver;
  let meter: WebhookReceiver;
  let upstreams: FakeUpstream[];
  let watched: Watched;

  beforeAll(async () => {
    let consoleDir: string;
    [consoleDir, browser, down, meter, upstreams] = await Promise.all([
      buildConsole(),
      launchChromium(),
      startWebhookReceiver('down'),
      startWebhookReceiver('ok'),
      Promise.all([startTrainingService(), startInferenceHost()]),
    ]);
    const config = testConfig(
      { service: upstreams[0]!.url, inference: upstreams[1]!.url },
      {
        notifications: {
          webhooks: [{ name: 'finance', url: `${down.url}/hook`, events: ['*'], secret: 'console-secret-0123456789' }],
          export: [{ name: 'openmeter', url: `${meter.url}/api/v1/events`, headers: { authorization: 'Bearer console-token' } }],
          delivery: { pollMs: 50, backoffMs: 60_000, maxBackoffMs: 60_000, timeoutMs: 1000, exportSettleMs: 0 },
        },
      },
    );
    gw = await startGateway(config, undefined, { consoleDir });
  }, 60_000);
  afterAll(async () => {
    await watched?.close();
    await browser?.close();
    await gw?.close();
    await Promise.all([down, meter, ...(upstreams ?? [])].map((s) => s?.close()));
  });

  it('lists each sink with its kind, origin, health and last outcome, and no secret', async () => {
    const sent = await request(gw.url).post('/admin/notifications/test').set('authorization', bearer(KEYS.admin));
    expect(sent.status).toBe(202);
    await down.waitForRequests(1);
    const chat = await request(gw.url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).send({ model: 'm', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    await meter.waitForRequests(1);
    // The deliverer records both outcomes after the receivers answered.
    await eventually(async () => {
      const sinks = (await request(gw.url).get('/admin/notifications').set('authorization', bearer(KEYS.admin))).body.sinks as Array<{ lastError: string | null; lastSuccessAt: string | null; pending: number }>;
      return sinks[0]!.lastError !== null && sinks[0]!.pending === 1 && sinks[1]!.lastSuccessAt !== null;
    });

    watched = await Watched.open(browser);
    const page = await watched.newPage();
    await page.goto(`${gw.url}/console/`);
    await signIn(page, KEYS.admin);
    await visit(page, 'Settings');
    const table = page.getByRole('table', { name: 'Notification sinks' });
    await table.waitFor();
    const rows = await table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => [...tr.querySelectorAll('td')].map((td) => td.textContent)));
    expect(rows.map((cells) => cells.slice(0, 5))).toEqual([
      ['finance', 'webhook (json)', down.url, 'failing', '1'],
      ['openmeter', 'export (CloudEvents)', meter.url, 'ok', '—'],
    ]);
    expect(rows[0]![6]).toBe('never');
    expect(rows[0]![7]).toBe('status 503');
    expect(rows[1]![6]).not.toBe('never');
    const text = await page.locator('main').textContent();
    expect(text).not.toContain('console-secret');
    expect(text).not.toContain('console-token');
    expect(watched.problems).toEqual([]);
  }, 60_000);
});
