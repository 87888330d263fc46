import { createServer, connect, type AddressInfo, type Server, type Socket } from 'node:net';

/** One relayed connection; once stalled it stays open and silent for good; once deaf it forwards the client's bytes but none of the answers. */
interface Relay {
  stalled: boolean;
  deaf: boolean;
  /** The client's last bytes, so a marker split across two chunks is still seen. */
  tail: string;
}

/**
 * A TCP relay in front of PostgreSQL that a test can break: `cut` closes every connection and
 * refuses new ones (the server is gone); `stall` makes every connection, open or new, drop all
 * bytes silently while staying open (a dead network behind a live middlebox: no error, no
 * close); `restore` relays new connections again — stalled ones stay silent.
 * `loseRepliesAfter(marker)` lets one statement through and loses its answer: the first
 * connection to send `marker` (e.g. `commit`) gets nothing back from then on, so the server
 * does the work while the client never hears that it did (a reply lost on the way).
 */
export class TcpProxy {
  private mode: 'relay' | 'stall' | 'cut' = 'relay';
  private readonly sockets = new Set<Socket>();
  private readonly relays = new Set<Relay>();
  private server: Server | undefined;
  private replyLossMarker: string | undefined;
  port = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(port = 0): Promise<void> {
    const server = createServer((client) => this.accept(client));
    await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
    this.server = server;
    this.port = (server.address() as AddressInfo).port;
  }

  private accept(client: Socket): void {
    this.track(client);
    if (this.mode !== 'relay') return; // stalled: accepted, never answered
    const relay: Relay = { stalled: false, deaf: false, tail: '' };
    this.relays.add(relay);
    const upstream = connect(this.targetPort, this.targetHost);
    this.track(upstream);
    client.on('data', (chunk: Buffer) => {
      if (relay.stalled) return;
      this.watchForMarker(relay, chunk);
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (!relay.stalled && !relay.deaf) client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => {
      client.destroy();
      this.relays.delete(relay);
    });
  }

  private watchForMarker(relay: Relay, chunk: Buffer): void {
    const marker = this.replyLossMarker;
    if (marker === undefined) return;
    const seen = relay.tail + chunk.toString('latin1');
    relay.tail = seen.slice(-marker.length);
    if (!seen.includes(marker)) return;
    relay.deaf = true;
    this.replyLossMarker = undefined;
  }

  /** The next connection to send `marker` loses every answer from then on (once; see the class comment). */
  loseRepliesAfter(marker: string): void {
    this.replyLossMarker = marker;
  }

  private track(socket: Socket): void {
    this.sockets.add(socket);
    socket.on('error', () => undefined);
    socket.on('close', () => this.sockets.delete(socket));
  }

  /** Drops every connection and stops listening: connecting is refused. */
  async cut(): Promise<void> {
    this.mode = 'cut';
    for (const socket of this.sockets) socket.destroy();
    await this.stopListening();
  }

  stall(): void {
    this.mode = 'stall';
    for (const relay of this.relays) relay.stalled = true;
  }

  /** Relays new connections again (listening on the same port after a cut). */
  async restore(): Promise<void> {
    if (!this.server) await this.start(this.port);
    this.mode = 'relay';
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await this.stopListening();
  }

  private async stopListening(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    if (server) await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
