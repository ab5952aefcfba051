import type { Caller } from '../../src/auth/caller';
import { ApiKeyRole } from '../../src/auth/role';
import { planQuota, Plan, quotaOfCaller } from '../../src/auth/plans';
import { identityOf } from '../../src/limits/identity';

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
