import { createServer, connect, type Server, type Socket } from 'node:net';
import type { AddressInfo } from 'node:net';

/**
 * A TCP relay in front of PostgreSQL that a test can break: `cut` closes every connection and
 * refuses new ones (the server is gone), `stall` keeps connections open but forwards nothing
 * (a network black hole), `restore` relays again.
 */
export class TcpProxy {
  private mode: 'relay' | 'stall' | 'cut' = 'relay';
  private readonly sockets = new Set<Socket>();
  private server: Server | undefined;
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
    const upstream = connect(this.targetPort, this.targetHost);
    this.track(upstream);
    client.on('data', (chunk) => {
      if (this.mode === 'relay') upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (this.mode === 'relay') client.write(chunk);
    });
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
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

  /** Keeps connections open but silently drops everything in both directions. */
  stall(): void {
    this.mode = 'stall';
  }

  /** Relays again (listening on the same port after a cut); stalled connections stay dead. */
  async restore(): Promise<void> {
    if (this.mode === 'stall') for (const socket of this.sockets) socket.destroy();
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
