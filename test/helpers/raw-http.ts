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

/**
 * Writes raw bytes and collects the answer until the server closes the connection. The client
 * ends its side after `endAfterMs` (0: never), or as soon as `answered` says all it waits for has come.
 */
export function exchange(
  url: string,
  bytes: string,
  endAfterMs = 1_000,
  answered?: (text: string) => boolean,
): Promise<{ head: string; body: string; closedAfterMs: number }> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(new URL(url).port), '127.0.0.1');
    let text = '';
    socket.on('data', (chunk) => {
      text += chunk.toString('latin1');
      if (answered?.(text)) socket.end();
    });
    socket.on('error', reject);
    socket.on('close', () => {
      const split = text.indexOf('\r\n\r\n');
      resolve({ head: text.slice(0, split), body: text.slice(split + 4), closedAfterMs: Date.now() - started });
    });
    socket.write(bytes);
    if (endAfterMs > 0) setTimeout(() => socket.end(), endAfterMs);
  });
}
