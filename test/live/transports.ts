import type { TestApp } from '../helpers/app';
import { gql } from '../helpers/gql';
import { activeSubscriptions, eventually, wsUrl } from '../helpers/live';
import { rawSocket } from '../helpers/raw-socket';

/** A subscription every transport can open: the stock feed. */
export const INVENTORY = 'subscription { inventoryChanged { petId quantity } }';

/** A client of a crowd: the address its proxy names in X-Forwarded-For, and the key it presents, if any. */
export interface Who {
  address: string;
  key?: string;
}

/** How one transport sends one request or subscribe: what it got, as `outcomeOf` says it. */
export type Transport = (app: TestApp, who: Who) => Promise<string>;

/** Admitted, or a refusal's status and code, and whether it says when to come back. */
const outcomeOf = (status: number, code: string | undefined, retryAfter: unknown) =>
  status === 200 ? 'admitted' : `${status} ${code}${Number(retryAfter) > 0 ? ', Retry-After' : ''}`;

export const headersOf = (who: Who): Record<string, string> => ({ 'X-Forwarded-For': who.address, ...(who.key ? { 'X-API-Key': who.key } : {}) });

export const oneRequest: Transport = async (app, who) => {
  const result = await gql(app.url, '{ __typename }', undefined, { headers: headersOf(who) });
  return outcomeOf(result.status, result.errors?.[0].extensions.code, result.headers['retry-after']);
};

/** A stream opened and let go at once. */
const oneStream: Transport = async (app, who) => {
  const response = await fetch(`${app.url}/graphql/stream`, {
    method: 'POST',
    headers: { accept: 'text/event-stream', 'content-type': 'application/json', ...headersOf(who) },
    body: JSON.stringify({ query: INVENTORY }),
  });
  if (response.status === 200) {
    await response.body?.cancel();
    return 'admitted';
  }
  const body = (await response.json()) as { errors: { extensions: { code: string } }[] };
  return outcomeOf(response.status, body.errors[0].extensions.code, response.headers.get('retry-after'));
};

/**
 * A socket of its own (the key in `connection_init`) and one subscribe on it: the socket closed
 * at `connection_init` (its code and reason), or the subscribe's refusal, or admitted.
 */
const oneSubscribe: Transport = async (app, who) => {
  const socket = await rawSocket(wsUrl(app), { headers: { 'X-Forwarded-For': who.address } });
  let closed: { code: number; reason: string } | undefined;
  void socket.closed.then((close) => (closed = close));
  try {
    socket.send({ type: 'connection_init', payload: who.key ? { 'X-API-Key': who.key } : {} });
    await eventually(() => closed !== undefined || socket.messages.length > 0);
    if (closed) return `closed ${closed.code} ${closed.reason}`;
    const before = await activeSubscriptions(app);
    socket.send({ id: '1', type: 'subscribe', payload: { query: INVENTORY } });
    const refusal = () => socket.messages.find((message) => message.type === 'error')?.payload[0];
    await eventually(async () => refusal() !== undefined || (await activeSubscriptions(app)) > before);
    const error = refusal();
    return error ? outcomeOf(error.extensions.status, error.extensions.code, error.extensions.retryAfter) : 'admitted';
  } finally {
    socket.socket.terminate();
  }
};

export const TRANSPORTS: Record<string, Transport> = { http: oneRequest, websocket: oneSubscribe, sse: oneStream };
