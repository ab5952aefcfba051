import type { IncomingMessage } from 'node:http';
import { type BlockList, isIP } from 'node:net';
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
  unverified?: unknown;
}

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
export function keyIdentifier(apiKeys: ApiKeyService) {
  return (address: string, presented: readonly unknown[]): Identified | Promise<Identified> => {
    const anonymous: Caller = { kind: 'anonymous', address };
    if (presented.length === 0) return { caller: anonymous, identity: identityOf(anonymous) };
    if (presented.some((value) => typeof value !== 'string')) return { caller: anonymous, identity: identityOf(anonymous), unverified: invalidApiKey() };
    return authenticateAll(apiKeys, address, (presented as string[]).map((value) => value.trim()));
  };
}

async function authenticateAll(apiKeys: ApiKeyService, address: string, rawKeys: string[]): Promise<Identified> {
  const anonymous: Caller = { kind: 'anonymous', address };
  let caller: Caller | undefined;
  for (const raw of rawKeys) {
    // A failed check rejects: an outage must not use up, limit or ban the key, nor anyone else.
    const key = await apiKeys.authenticate(raw);
    if (!key) return { caller: anonymous, identity: identityOf(anonymous), unverified: invalidApiKey() };
    caller ??= { kind: 'key', address, key };
  }
  const identified = caller ?? anonymous;
  return { caller: identified, identity: identityOf(identified) };
}

/** An HTTP request's caller, from its X-API-Key header and client address. */
export function requestIdentifier(apiKeys: ApiKeyService, trustProxy: TrustProxy) {
  const identify = keyIdentifier(apiKeys);
  const none: readonly unknown[] = [];
  return (request: IncomingMessage): Identified | Promise<Identified> => {
    const header = request.headers['x-api-key'];
    return identify(clientAddress(request, trustProxy), header === undefined ? none : [header]);
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
