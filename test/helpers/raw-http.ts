import { connect, type Socket } from 'node:net';

export interface PartRequest {
  socket: Socket;
  /** Sends the rest of the body. */
  finish(): void;
  /** Resets the connection (TCP RST), as a client that goes away does. */
  reset(): void;
  /** Everything the server sent, once the connection is closed. */
  closed: Promise<string>;
  /** Everything the server sent, once it ends with `ending` (the last chunk of a chunked body, say). */
  received(ending: string): Promise<string>;
}

/**
 * An HTTP request sent by hand on its own connection, its body held back after `sentBytes` bytes:
 * the server has its headers (and takes its place in line) while the rest is still to come.
 */
export async function partRequest(
  url: string,
  options: { path?: string; headers?: Record<string, string>; body: string; sentBytes: number; localAddress?: string },
): Promise<PartRequest> {
  const { hostname, port } = new URL(url);
  const socket = connect({ port: Number(port), host: hostname, localAddress: options.localAddress });
  await new Promise<void>((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  const chunks: Buffer[] = [];
  const text = () => Buffer.concat(chunks).toString();
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const closed = new Promise<string>((resolve) => socket.once('close', () => resolve(Buffer.concat(chunks).toString())));
  socket.on('error', () => undefined);
  const headers = { 'Content-Type': 'application/json', Connection: 'close', ...options.headers, 'Content-Length': String(Buffer.byteLength(options.body)) };
  const head = `POST ${options.path ?? '/graphql'} HTTP/1.1\r\nHost: ${hostname}:${port}\r\n${Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`).join('')}\r\n`;
  const body = Buffer.from(options.body);
  socket.write(Buffer.concat([Buffer.from(head), body.subarray(0, options.sentBytes)]));
  return {
    socket,
    finish: () => void socket.write(body.subarray(options.sentBytes)),
    reset: () => void socket.resetAndDestroy(),
    closed,
    received: (ending) =>
      new Promise<string>((resolve) => {
        const check = () => {
          if (!text().endsWith(ending)) return;
          socket.off('data', check);
          resolve(text());
        };
        socket.on('data', check);
        check();
      }),
  };
}

/** The status of a raw HTTP response, 0 when none came. */
export function statusOf(response: string): number {
  return Number(/^HTTP\/1\.1 (\d{3})/.exec(response)?.[1] ?? 0);
}
