import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CLOUDEVENTS_BATCH, USAGE_EVENT_TYPE } from '../../../src/outbox/index.js';
import { openDurableStore, type DurableStore, type LedgerRow } from '../../../src/store/index.js';
import { startStack, tempDatabasePath } from '../../helpers/gateway.js';
import { bearer, KEYS } from '../../helpers/keys.js';
import { createTestDatabase, type TestDatabase } from '../../helpers/postgres.js';
import { eventually } from '../../helpers/wait.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../fixtures/webhook-receiver.js';

const ROWS = 10_000;
type Stack = Awaited<ReturnType<typeof startStack>>;

interface CloudEventJson {
  specversion: string;
  type: string;
  source: string;
  id: string;
  subject: string;
  time: string;
  datacontenttype: string;
  data: Record<string, unknown>;
}

function ledgerRow(i: number, at: string): LedgerRow {
  return {
    id: randomUUID(), requestId: `req-${i}`, at, team: i % 2 ? 'team-a' : 'team-b', project: 'prod', keyId: 'bulk-key', route: '/v1/chat/completions',
    method: 'POST', status: 200, model: 'gpt-test', promptTokens: i, completionTokens: 1, totalTokens: i + 1, costNanos: i * 1000, estimated: false,
    requestBytes: 10, durationMs: 3, traceId: null, requestedModel: null, fallbackFrom: null,
  };
}

const events = (receiver: WebhookReceiver): CloudEventJson[] => receiver.received.flatMap((r) => JSON.parse(r.body) as CloudEventJson[]);

/** Where the gateway keeps its ledger: PostgreSQL (batches built on the event loop) or a SQLite file (built by the export worker). */
interface LedgerDatabase {
  readonly settings: { url: string } | { path: string };
  drop(): Promise<void>;
}

const DIALECTS: ReadonlyArray<readonly [string, () => Promise<LedgerDatabase>]> = [
  ['PostgreSQL', async () => {
    const database: TestDatabase = await createTestDatabase();
    return { settings: { url: database.url }, drop: () => database.drop() };
  }],
  ['SQLite', async () => {
    const path = tempDatabasePath();
    return { settings: { path }, drop: async () => rmSync(dirname(path), { recursive: true, force: true }) };
  }],
];

describe.each(DIALECTS)('usage export as CloudEvents (SPEC 24), %s', (_name, createDatabase) => {
  let database: LedgerDatabase;
  let store: DurableStore;
  let receiver: WebhookReceiver;
  let stack: Stack;
  beforeAll(async () => {
    database = await createDatabase();
    receiver = await startWebhookReceiver('ok');
    stack = await startStack({
      database: database.settings,
      notifications: {
        export: [{ name: 'openmeter', url: `${receiver.url}/api/v1/events`, batch: 1000, headers: { authorization: 'Bearer om-token-123' } }],
        delivery: { pollMs: 50, leaseMs: 5000, backoffMs: 20, maxBackoffMs: 100, timeoutMs: 2000, exportSettleMs: 0 },
      },
    });
    store = await openDurableStore({ url: '', path: '', ...database.settings });
  });
  afterAll(async () => {
    await stack?.close();
    await store?.close();
    await receiver?.close();
    await database?.drop();
  });

  it('exports 10,000 ledger rows with none missing, ids equal to the ledger\'s, after a receiver outage', async () => {
    receiver.mode = 'down';
    const base = Date.now() - 60_000;
    const rows = Array.from({ length: ROWS }, (_, i) => ledgerRow(i, new Date(base + Math.floor(i / 10)).toISOString()));
    for (let i = 0; i < ROWS; i += 1000) await store.insertLedgerRows(rows.slice(i, i + 1000));
    await receiver.waitForRequests(2);
    receiver.mode = 'ok';
    await receiver.waitUntil(() => new Set(events(receiver).map((e) => e.id)).size >= ROWS);
    const exported = new Set(events(receiver).map((e) => e.id));
    expect([...exported].sort()).toEqual(rows.map((row) => row.id).sort());
    const accepted = receiver.received.filter((_r, i) => i >= 2);
    expect(accepted.every((r) => r.headers['content-type'] === CLOUDEVENTS_BATCH && r.headers.authorization === 'Bearer om-token-123' && r.path === '/api/v1/events')).toBe(true);
    expect(accepted.every((r) => (JSON.parse(r.body) as unknown[]).length <= 1000)).toBe(true);
  });

  it('sends each row as the CloudEvent the SPEC describes: data as /admin/usage/requests shows the row', async () => {
    const chat = await request(stack.gw.url).post('/v1/chat/completions').set('authorization', bearer(KEYS.teamA)).send({ model: 'gpt-test', messages: [{ role: 'user', content: 'hi' }] });
    expect(chat.status).toBe(200);
    await stack.gw.gateway.settled();
    const day = new Date().toISOString().slice(0, 10);
    const page = await request(stack.gw.url).get(`/admin/usage/requests?from=${day}&to=${day}&limit=1000&key=team-a-bot`).set('authorization', bearer(KEYS.admin));
    const row = (page.body.data as Array<Record<string, unknown>>).find((r) => r.request_id === chat.headers['x-request-id'])!;
    await receiver.waitUntil(() => events(receiver).some((e) => e.id === row.id));
    const event = events(receiver).find((e) => e.id === row.id)!;
    expect(event).toEqual({
      specversion: '1.0',
      type: USAGE_EVENT_TYPE,
      source: '/tollgate',
      id: row.id,
      subject: `team-a/${String(row.project)}`,
      time: row.at,
      datacontenttype: 'application/json',
      data: row,
    });
    // The deliveries show as batches, delivered, and the lag returns to 0.
    const list = await request(stack.gw.url).get('/admin/notifications?sink=openmeter&state=delivered&limit=1000').set('authorization', bearer(KEYS.admin));
    expect(list.status).toBe(200);
    expect(list.body.data.length).toBeGreaterThanOrEqual(ROWS / 1000);
    expect(list.body.data[0]).toMatchObject({ sink: 'openmeter', type: 'usage.export', state: 'delivered' });
    expect(JSON.stringify(list.body)).not.toContain('om-token-123');
    // A sent batch is a record: nothing to retry (the export resends from its cursor), and it stays delivered.
    const batchId = String(list.body.data[0].id);
    const retry = await request(stack.gw.url).post(`/admin/notifications/${encodeURIComponent(batchId)}/retry`).set('authorization', bearer(KEYS.admin));
    expect(retry.status).toBe(409);
    expect(retry.body.error).toMatchObject({
      code: 'export_batch_not_retryable',
      param: 'id',
      message: `"${batchId}" records a usage export batch that was sent; the export resends from its cursor by itself, so there is nothing to retry.`,
    });
    const after = await request(stack.gw.url).get(`/admin/notifications?sink=openmeter&state=delivered&limit=1000`).set('authorization', bearer(KEYS.admin));
    expect(after.body.data.map((d: { id: string }) => d.id)).toContain(batchId);
    await eventually(async () => (await request(stack.gw.url).get('/metrics')).text.includes('tollgate_export_lag_seconds{sink="openmeter"} 0'));
    const metrics = (await request(stack.gw.url).get('/metrics')).text;
    expect(metrics).toMatch(/tollgate_outbox_delivered_total\{sink="openmeter",result="ok"\} \d+/);
    expect(metrics).toMatch(/tollgate_outbox_delivered_total\{sink="openmeter",result="failed"\} [1-9]/);
  });
});
