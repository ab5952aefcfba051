import { createServer, connect, type Server, type Socket } from 'node:net';

export interface TcpProxy {
  port: number;
  /** Drops every open connection and refuses new ones: the database is gone. */
  cut(): Promise<void>;
  /** Keeps every connection open but passes nothing on, new ones included: the database hangs. */
  freeze(): void;
  /** Accepts connections again, on the same port. */
  restore(): Promise<void>;
  close(): Promise<void>;
}

/** A loopback TCP proxy to `target`, which a test cuts and restores to stage an outage. */
export async function tcpProxy(target: { host: string; port: number }): Promise<TcpProxy> {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;
  let frozen = false;

  const listen = async () => {
    server = createServer((client) => {
      if (frozen) {
        sockets.add(client);
        return;
      }
      const upstream = connect(target.port, target.host);
      for (const socket of [client, upstream]) {
        sockets.add(socket);
        socket.on('close', () => sockets.delete(socket));
        socket.on('error', () => {
          client.destroy();
          upstream.destroy();
        });
      }
      client.on('data', (chunk) => frozen || upstream.write(chunk));
      upstream.on('data', (chunk) => frozen || client.write(chunk));
    });
    await new Promise<void>((resolve) => server?.listen(port, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
  };

  const stop = async () => {
    frozen = false;
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
    server = undefined;
  };

  await listen();
  return {
    get port() {
      return port;
    },
    cut: stop,
    freeze: () => {
      frozen = true;
    },
    restore: async () => {
      await stop();
      await listen();
    },
    close: stop,
  };
}
