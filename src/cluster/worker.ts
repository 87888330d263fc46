import type { Gateway, GatewayOptions } from '../app.js';
import type { Config } from '../config/index.js';
import { createLogger, seriesOf, type Logger } from '../observability/index.js';
import type { SiblingChannel } from '../store/index.js';
import { LEDGER_JOURNAL_ENV, isOurs, type PrimaryMessage, type WorkerMessage } from './messages.js';

/** A worker's side of the cluster: what its gateway is built with, and the call that says it listens. */
export interface WorkerLink {
  readonly options: GatewayOptions;
  /** The gateway listens: the primary counts it in, and reloads reach it. */
  ready(gateway: Gateway): void;
}

type Registry = Parameters<NonNullable<GatewayOptions['exposition']>>[0];

/**
 * Joins the primary that forked this process. Its logger names the worker's pid (the lines of
 * all workers share one stdout); its scrapes answer for every worker; its SQLite changes and
 * admin reloads reach the other workers; and should the primary vanish, it drains and exits.
 */
export function joinPrimary(config: Pick<Config, 'logging'>): WorkerLink {
  const logger = createLogger(config.logging.level).child({ pid: process.pid });
  const scrapes = new PendingScrapes();
  const siblings: Array<(payload: string) => void> = [];
  let registry: Registry | undefined;
  let gateway: Gateway | undefined;

  process.on('message', (message: unknown) => {
    if (!isOurs<PrimaryMessage>(message)) return;
    switch (message.tollgate) {
      case 'collect':
        void collect(registry, message.id);
        return;
      case 'exposition':
        scrapes.answer(message.id, message.body);
        return;
      case 'reload':
        if (gateway) reloadFromPrimary(gateway, logger, message.echo);
        return;
      case 'change':
        for (const listener of siblings) listener(message.payload);
        return;
    }
  });
  // The primary is gone (killed with -9): nothing would replace or aggregate this worker any more.
  process.on('disconnect', () => process.kill(process.pid, 'SIGTERM'));

  const sqliteSiblings: SiblingChannel = {
    send: (payload) => tell({ tollgate: 'change', payload }),
    subscribe: (listener) => void siblings.push(listener),
  };
  return {
    options: {
      logger,
      sqliteSiblings,
      ...(process.env[LEDGER_JOURNAL_ENV] ? { ledgerJournal: process.env[LEDGER_JOURNAL_ENV] } : {}),
      onAdminReload: () => tell({ tollgate: 'reloaded' }),
      exposition: (local) => {
        registry = local;
        return () => scrapes.request();
      },
    },
    ready(built) {
      gateway = built;
      tell({ tollgate: 'ready' });
    },
  };
}

/** Scrapes of this worker's metrics endpoint, each answered by the primary with every worker's series. */
class PendingScrapes {
  private next = 0;
  private readonly waiting = new Map<number, { resolve: (body: string) => void; reject: (error: Error) => void }>();

  request(): Promise<string> {
    return new Promise<string>((resolve, reject) => {
      const id = this.next++;
      this.waiting.set(id, { resolve, reject });
      tell({ tollgate: 'scrape', id });
    });
  }

  answer(id: number, body: string | null): void {
    const pending = this.waiting.get(id);
    this.waiting.delete(id);
    if (body === null) pending?.reject(new Error('the primary could not collect every worker\'s series'));
    else pending?.resolve(body);
  }
}

async function collect(registry: Registry | undefined, id: number): Promise<void> {
  const series = registry ? await seriesOf(registry).catch(() => null) : null;
  tell({ tollgate: 'series', id, series });
}

function reloadFromPrimary(gateway: Gateway, logger: Logger, echo: boolean): void {
  // The outcome is logged by reload itself (and, unless an echo, audited).
  gateway.reload('SIGHUP', 'SIGHUP', undefined, echo).catch((err: unknown) => logger.error({ err: (err as Error).message }, 'configuration reload refused'));
}

function tell(message: WorkerMessage): void {
  if (process.connected) process.send?.(message);
}
