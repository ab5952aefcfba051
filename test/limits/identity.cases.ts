import type { IncomingMessage } from 'node:http';
import { clientAddress } from '../../src/auth/identify-caller';
import type { Caller } from '../../src/auth/caller';
import { ApiKeyRole } from '../../src/auth/role';
import { planQuota, Plan, quotaOfCaller } from '../../src/auth/plans';
import { identityOf } from '../../src/limits/identity';
import { loadConfig } from '../../src/config';

describe('identityOf', () => {
  it('counts a key by its id, wherever it comes from', () => {
    const key = { id: '42', role: ApiKeyRole.CLIENT, plan: Plan.PRO, quota: planQuota(Plan.PRO) };
    const caller: Caller = { kind: 'key', address: '10.0.0.1', key };
    expect(identityOf(caller)).toBe('key:42');
    expect(quotaOfCaller(caller)).toEqual({ perMinute: 300, perDay: 10_000 });
  });

  it('counts an anonymous client by its address, on the FREE quota', () => {
    expect(identityOf({ kind: 'anonymous', address: '203.0.113.7' })).toBe('ip:203.0.113.7');
    expect(identityOf({ kind: 'anonymous', address: '2001:DB8::1' })).toBe('ip:2001:db8::1');
    expect(quotaOfCaller({ kind: 'anonymous', address: '203.0.113.7' })).toEqual({ perMinute: 60, perDay: 1_000 });
  });

  it('counts an IPv4 client once, whether the socket saw it as IPv4 or IPv4-mapped IPv6', () => {
    expect(identityOf({ kind: 'anonymous', address: '::ffff:203.0.113.7' })).toBe('ip:203.0.113.7');
  });
});

describe('clientAddress', () => {
  /** A request as the server sees it: its peer's address and what it says in X-Forwarded-For. */
  const from = (remoteAddress: string, forwarded?: string) =>
    ({ headers: forwarded === undefined ? {} : { 'x-forwarded-for': forwarded }, socket: { remoteAddress } }) as unknown as IncomingMessage;
  const proxies = loadConfig({ TRUST_PROXY: '10.0.0.5, 192.168.0.0/16, fd00::/8' }).trustProxy;

  it.each([
    ['a listed proxy', '10.0.0.5', '203.0.113.9'],
    ['a proxy in a listed range', '192.168.4.4', '203.0.113.9'],
    ['a listed proxy seen by a dual-stack server', '::ffff:10.0.0.5', '203.0.113.9'],
    ['a listed IPv6 range', 'fd00::7', '203.0.113.9'],
    ['a peer not listed', '10.0.0.6', '10.0.0.6'],
    ['a peer not listed, IPv4-mapped', '::ffff:203.0.113.1', '::ffff:203.0.113.1'],
  ])('with TRUST_PROXY listing proxies, from %s: %s → %s', (_label, peer, expected) => {
    expect(clientAddress(from(peer, '198.51.100.1, 203.0.113.9'), proxies)).toBe(expected);
  });

  it('believes any peer with true, none with false', () => {
    expect(clientAddress(from('10.9.9.9', '203.0.113.9'), true)).toBe('203.0.113.9');
    expect(clientAddress(from('10.9.9.9', '203.0.113.9'), false)).toBe('10.9.9.9');
  });
});
