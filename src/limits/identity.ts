import type { Quota } from './quota';

/** What identityOf needs of a caller; every Caller fits. */
export type LimitedCaller = { kind: 'key'; key: { id: string } } | { kind: 'anonymous'; address: string };

/** A caller whose key carries its quota: what the request limiter needs; every Caller fits. */
export type QuotedCaller = { kind: 'key'; key: { id: string; quota: Quota } } | { kind: 'anonymous'; address: string };

/**
 * The identity a request is counted against: its key, else its client address (docs/contract.md §5).
 * A request with an invalid key reaches here as anonymous, so it counts against its address.
 */
export function identityOf(caller: LimitedCaller): string {
  return caller.kind === 'key' ? `key:${caller.key.id}` : `ip:${normaliseAddress(caller.address)}`;
}

/**
 * A dual-stack socket reports an IPv4 client as `::ffff:203.0.113.7`; an IPv4 socket as
 * `203.0.113.7`. Instances listening differently must still count that client once.
 */
function normaliseAddress(address: string): string {
  const lower = address.toLowerCase();
  const mapped = /^::ffff:(\d{1,3}(?:\.\d{1,3}){3})$/.exec(lower);
  return mapped ? mapped[1] : lower;
}
