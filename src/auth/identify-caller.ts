import type { IncomingMessage } from 'node:http';
import { type BlockList, isIP } from 'node:net';
import type { ApiError } from '../errors';
import { invalidApiKey } from '../refusals';
import { identityOf } from '../limits/identity';
import type { ApiKeyService } from './api-key.service';
import type { Caller } from './caller';

/** Who sent a request, and whom it is counted against. */
export interface Identified {
  caller: Caller;
  /** The identity of the limiter's windows: the caller's (an invalid key's is its address's). */
  identity: string;
  /** Why the request is refused once it has been counted: an X-API-Key that names no valid key (401). */
  unverified?: ApiError;
  /** Every key presented, as checked: a connection's are checked again while it is open. */
  keys: readonly string[];
}

/** Who presents `presented` from `address`: the check of the keys themselves (also a connection's, again). */
export type KeyIdentifier = (address: string, presented: readonly unknown[]) => Identified | Promise<Identified>;

/**
 * Who sent a request or opened a connection, over any transport: an HTTP request, an SSE stream,
 * or a WebSocket at `connection_init` with that message's `payload`.
 */
export type CallerIdentifier = (request: IncomingMessage, payload?: Readonly<Record<string, unknown>>) => Identified | Promise<Identified>;

/**
 * The first step of every request and connection: resolves the API keys it presents to a caller.
 * Every key presented (a socket may send one in its payload and one in its upgrade header) must
 * be a string naming a valid key, the first being the caller's. An unknown or revoked key is not
 * treated as anonymous: the request is counted against its client address, then refused
 * (docs/contract.md §4, §5). A key that cannot be checked now (the database is down), and that this
 * instance has no earlier answer for, rejects the promise with the check's failure (503): the
 * request is refused before it is counted, against anyone. Without a key the answer comes at
 * once, with no promise to wait for.
 */
export function keyIdentifier(apiKeys: ApiKeyService): KeyIdentifier {
  return (address, presented) => {
    const anonymous: Caller = { kind: 'anonymous', address };
    if (presented.length === 0) return { caller: anonymous, identity: identityOf(anonymous), keys: [] };
    if (presented.some((value) => typeof value !== 'string')) return { caller: anonymous, identity: identityOf(anonymous), unverified: invalidApiKey(), keys: [] };
    return authenticateAll(apiKeys, address, (presented as string[]).map((value) => value.trim()));
  };
}

async function authenticateAll(apiKeys: ApiKeyService, address: string, rawKeys: string[]): Promise<Identified> {
  const anonymous: Caller = { kind: 'anonymous', address };
  let caller: Caller | undefined;
  for (const raw of rawKeys) {
    // A failed check rejects: an outage must not use up, limit or ban the key, nor anyone else.
    const key = await apiKeys.authenticate(raw);
    if (!key) return { caller: anonymous, identity: identityOf(anonymous), unverified: invalidApiKey(), keys: rawKeys };
    caller ??= { kind: 'key', address, key };
  }
  const identified = caller ?? anonymous;
  return { caller: identified, identity: identityOf(identified), keys: rawKeys };
}

/** The names a `connection_init` payload may give its key under. */
const PAYLOAD_KEY_NAMES = ['X-API-Key', 'x-api-key'];

/**
 * The one identification of every transport (docs/contract.md §4, §5, §9): the client address by
 * TRUST_PROXY (clientAddress), and the keys presented, checked by keyIdentifier. A request or an
 * SSE stream presents its X-API-Key header; a WebSocket its `connection_init` payload's key and
 * its upgrade request's header, the payload's first (it is the caller's when both are valid).
 */
export function callerIdentifier(apiKeys: ApiKeyService, trustProxy: TrustProxy): CallerIdentifier {
  const identify = keyIdentifier(apiKeys);
  return (request, payload) => {
    const presented: unknown[] = [];
    const payloadName = payload && PAYLOAD_KEY_NAMES.find((name) => Object.hasOwn(payload, name));
    if (payloadName !== undefined) presented.push(payload?.[payloadName]);
    const header = request.headers['x-api-key'];
    if (header !== undefined) presented.push(header);
    return identify(clientAddress(request, trustProxy), presented);
  };
}

/** TRUST_PROXY as config.ts reads it: nobody, any peer, or the listed proxies. */
export type TrustProxy = boolean | BlockList;

/**
 * The client's address, for HTTP requests and WebSocket upgrades alike: behind a trusted proxy
 * (one hop), the X-Forwarded-For entry that proxy added, the right-most, but only when it is an IP
 * address; any other text ("garbage", "1.1.1.1:1234") would otherwise let a client choose a fresh
 * identity per request. With a list of proxies, only a peer in it is believed: a client that
 * reaches the gateway around the proxy cannot name its own address. Otherwise the socket's
 * address stands.
 */
export function clientAddress(request: IncomingMessage, trustProxy: TrustProxy): string {
  const peer = request.socket.remoteAddress;
  const forwarded = request.headers['x-forwarded-for'];
  const added = typeof forwarded === 'string' && trusts(trustProxy, peer) ? forwarded.split(',').pop()?.trim() : undefined;
  if (added && isIP(added)) return added;
  return peer ?? 'unknown';
}

/** A dual-stack server sees an IPv4 peer as ::ffff:a.b.c.d; the list names it as a.b.c.d. */
const IPV4_MAPPED = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i;

function trusts(trustProxy: TrustProxy, peer: string | undefined): boolean {
  if (typeof trustProxy === 'boolean') return trustProxy;
  if (peer === undefined) return false;
  const address = IPV4_MAPPED.exec(peer)?.[1] ?? peer;
  return trustProxy.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
}
