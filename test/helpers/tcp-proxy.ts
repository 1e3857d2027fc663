import { type Server, type Socket, connect, createServer } from 'node:net';

// A TCP relay between Sightline and PostgreSQL, so a test can make the database vanish the way a
// network failure or a restart does (every connection dropped, new ones refused) and come back on
// the same address, without touching the shared PostgreSQL server.

export interface TcpProxy {
  /** The local port clients connect to; it stays the same across cut() and restore(). */
  readonly port: number;
  /** Closes every relayed connection and refuses new ones (ECONNREFUSED) until restore(). */
  cut(): Promise<void>;
  /** Accepts connections again on the same port. */
  restore(): Promise<void>;
  /**
   * Once: when a client sends bytes containing `marker`, relays them to the server, then drops
   * the connection before the server's answer can come back (the client never learns the outcome).
   */
  dropAfterSending(marker: string): void;
  /**
   * Ends every relayed connection on the server's side only, as a failover or a vanished server
   * does: the clients see nothing until they send, and then get a reset. New connections work.
   */
  severSilently(): void;
  /**
   * Relayed connections stop carrying bytes either way but stay open, as with a server that
   * stopped answering or a blackholed network: the client waits for an answer that never comes.
   * With `newConnectionsToo`, connections opened later are stalled as well, until `unstall()`.
   */
  stall(options?: { newConnectionsToo?: boolean }): void;
  /** New connections are relayed again (stalled ones stay stalled until closed). */
  unstall(): void;
  close(): Promise<void>;
}

export async function startTcpProxy(targetHost: string, targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let dropMarker: Buffer | null = null;
  const severed = new WeakSet<{ client: Socket; upstream: Socket }>();
  const dropped = new WeakSet<{ client: Socket; upstream: Socket }>();
  const stalled = new WeakSet<{ client: Socket; upstream: Socket }>();
  let stallNew = false;
  const stallPair = (pair: { client: Socket; upstream: Socket }) => {
    stalled.add(pair);
    pair.upstream.unpipe(pair.client);
  };

  const relay = (client: Socket) => {
    const upstream = connect(targetPort, targetHost);
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      // A dropped pair's server side closes by itself once the server has read the last bytes:
      // destroying it here could reset it first, and a reset discards what the server has not read.
      if (!dropped.has(pair)) upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', () => {
      if (!severed.has(pair)) end();
    });
    upstream.pipe(client);
    if (stallNew) stallPair(pair);
    client.on('data', (chunk: Buffer) => {
      if (stalled.has(pair)) return;
      if (severed.has(pair)) {
        client.resetAndDestroy();
        return;
      }
      if (dropMarker && chunk.includes(dropMarker)) {
        dropMarker = null;
        pairs.delete(pair);
        dropped.add(pair);
        // The server gets the bytes and a clean end of stream (a reset could discard them);
        // the client gets nothing more, and the server's answer is read and thrown away.
        upstream.unpipe(client);
        upstream.resume();
        upstream.end(chunk);
        client.destroy();
        return;
      }
      upstream.write(chunk);
    });
  };

  let server: Server = createServer(relay);
  await listen(server, 0);
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the proxy has no port');
  const port = address.port;

  const cut = async () => {
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    for (const pair of pairs) {
      pair.client.destroy();
      pair.upstream.destroy();
    }
    pairs.clear();
    await closed;
  };

  return {
    port,
    cut,
    async restore() {
      server = createServer(relay);
      await listen(server, port);
    },
    severSilently() {
      for (const pair of pairs) {
        severed.add(pair);
        pair.upstream.unpipe(pair.client);
        pair.upstream.destroy();
      }
    },
    stall(options = {}) {
      for (const pair of pairs) stallPair(pair);
      stallNew = options.newConnectionsToo ?? false;
    },
    unstall() {
      stallNew = false;
    },
    dropAfterSending(marker) {
      dropMarker = Buffer.from(marker);
    },
    async close() {
      if (server.listening) await cut();
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
}
