import WebSocket from 'ws';

export const PROTOCOL = 'graphql-transport-ws';

export interface RawSocket {
  socket: WebSocket;
  messages: any[];
  closed: Promise<{ code: number; reason: string }>;
  send(message: unknown): void;
  /** The next message from the server; rejects after 3 s. */
  next(): Promise<any>;
}

export interface RawSocketOptions {
  /** null: ask for no subprotocol. */
  protocol?: string | null;
  headers?: Record<string, string>;
}

/** A bare socket speaking graphql-ws by hand, to send what a well-behaved client never would. */
export async function rawSocket(url: string, options: RawSocketOptions = {}): Promise<RawSocket> {
  const protocols = options.protocol === null ? [] : [options.protocol ?? PROTOCOL];
  const socket = new WebSocket(url, protocols, { headers: options.headers });
  const messages: any[] = [];
  let waiting: ((message: any) => void) | undefined;
  socket.on('message', (data) => {
    const message = JSON.parse(String(data));
    if (waiting) {
      waiting(message);
      waiting = undefined;
    } else {
      messages.push(message);
    }
  });
  const closed = new Promise<{ code: number; reason: string }>((resolve) =>
    socket.on('close', (code, reason) => resolve({ code, reason: String(reason) })),
  );
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('error', reject);
  });
  return {
    socket,
    messages,
    closed,
    send: (message) => socket.send(typeof message === 'string' ? message : JSON.stringify(message)),
    next: () =>
      messages.length > 0
        ? Promise.resolve(messages.shift())
        : new Promise((resolve, reject) => {
            const timer = setTimeout(() => reject(new Error('no message within 3 s')), 3_000);
            waiting = (message) => {
              clearTimeout(timer);
              resolve(message);
            };
          }),
  };
}

/** A socket past connection_init, with an optional key in its payload. */
export async function acknowledgedSocket(url: string, key?: string, options: RawSocketOptions = {}): Promise<RawSocket> {
  const socket = await rawSocket(url, options);
  socket.send({ type: 'connection_init', payload: key ? { 'X-API-Key': key } : {} });
  const ack = await socket.next();
  if (ack?.type !== 'connection_ack') throw new Error(`expected connection_ack, got ${JSON.stringify(ack)}`);
  return socket;
}

export interface RefusedUpgrade {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: any;
}

/** An upgrade the server answers with an HTTP response instead of switching protocols. */
export function refusedUpgrade(url: string, options: RawSocketOptions = {}): Promise<RefusedUpgrade> {
  const socket = new WebSocket(url, [options.protocol ?? PROTOCOL], { headers: options.headers });
  return new Promise((resolve, reject) => {
    socket.once('open', () => {
      socket.close();
      reject(new Error('expected the upgrade to be refused, but the socket opened'));
    });
    socket.once('error', reject);
    socket.once('unexpected-response', (_request, response) => {
      let body = '';
      response.on('data', (chunk: Buffer) => (body += chunk.toString()));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, headers: response.headers, body: JSON.parse(body) }));
    });
  });
}
