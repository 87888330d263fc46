import pg from 'pg';
import { CHANGE_CHANNEL } from '../core/dialect.js';
import type { StoreLogger } from '../core/logger.js';

export interface ChangeListenerOptions {
  readonly url: string;
  readonly applicationName: string;
  /** Bound on connecting and on the liveness check. */
  readonly timeoutMs: number;
  readonly onNotification: (payload: string) => void;
  /** Called once listening again after the connection was lost (or never came up at open). */
  readonly onResync: () => void;
  readonly logger: StoreLogger;
  /** How often an idle connection is checked with a query (a half-open TCP connection shows no error). */
  readonly checkEveryMs: number;
}

const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * One dedicated connection that LISTENs on the change channel. When it is lost it reconnects
 * by itself, backing off from 100 ms to 5 s, and never throws or leaves an 'error' unheard;
 * once listening again it asks for a resync, since notifications sent meanwhile are gone.
 */
export class PostgresChangeListener {
  private client: pg.Client | undefined;
  private closed = false;
  private retryMs = FIRST_RETRY_MS;
  private retryTimer: NodeJS.Timeout | undefined;
  private readonly checkTimer: NodeJS.Timeout;
  /** Connected and LISTENing (not while connecting or waiting to retry). */
  private listening = false;
  private checking = false;
  private outageLogged = false;

  constructor(private readonly options: ChangeListenerOptions) {
    this.checkTimer = setInterval(() => void this.checkAlive(), options.checkEveryMs);
    this.checkTimer.unref();
  }

  /** First connection; resolves whether or not it succeeded (a failure keeps retrying in the background). */
  start(): Promise<void> {
    return this.connect(false);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.checkTimer);
    clearTimeout(this.retryTimer);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }

  private async connect(afterLoss: boolean): Promise<void> {
    this.retryTimer = undefined;
    if (this.closed) return;
    const client = new pg.Client({
      connectionString: this.options.url,
      application_name: this.options.applicationName,
      connectionTimeoutMillis: this.options.timeoutMs,
      keepAlive: true,
    });
    client.on('error', (error) => this.lost(client, error));
    client.on('end', () => this.lost(client, new Error('connection ended')));
    client.on('notification', (message) => {
      if (message.channel === CHANGE_CHANNEL && message.payload !== undefined) this.options.onNotification(message.payload);
    });
    this.client = client;
    try {
      await client.connect();
      await queryWithin(client, `LISTEN ${CHANGE_CHANNEL}`, this.options.timeoutMs);
    } catch (error) {
      this.lost(client, error);
      return;
    }
    if (this.client !== client) return; // lost or closed while connecting
    this.listening = true;
    this.retryMs = FIRST_RETRY_MS;
    if (this.outageLogged) this.options.logger.warn({}, 'store change feed listening again; caches resync');
    this.outageLogged = false;
    if (afterLoss) this.options.onResync();
  }

  private lost(client: pg.Client, error: unknown): void {
    if (this.closed || client !== this.client) return; // already handled, or shutting down
    this.client = undefined;
    this.listening = false;
    client.removeAllListeners('notification');
    client.end().catch(() => undefined);
    if (!this.outageLogged) {
      this.outageLogged = true;
      const reason = error instanceof Error ? error.message : String(error);
      this.options.logger.warn({ err: reason }, 'store change feed lost its PostgreSQL connection; reconnecting');
    }
    const delay = this.retryMs;
    this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
    this.retryTimer = setTimeout(() => void this.connect(true), delay);
    this.retryTimer.unref();
  }

  /** A trivial query on the idle connection; one that fails or hangs counts as a lost connection. */
  private async checkAlive(): Promise<void> {
    const client = this.client;
    if (!client || !this.listening || this.checking) return;
    this.checking = true;
    try {
      await queryWithin(client, 'select 1', this.options.timeoutMs);
    } catch (error) {
      this.lost(client, error);
    } finally {
      this.checking = false;
    }
  }
}

/** A query that rejects after `timeoutMs` if the server has not answered (the connection is then given up). */
async function queryWithin(client: pg.Client, text: string, timeoutMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([client.query(text), hung]);
  } finally {
    clearTimeout(timer);
  }
}
