import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_SOCKET_CEILING, openFileLimit, socketCeiling } from '../../src/limits/open-file-limit';
import { SocketAdmission, SocketTicket } from '../../src/limits/socket-admission';

const admitted = (ticket: SocketTicket | string): SocketTicket => {
  if (!(ticket instanceof SocketTicket)) throw new Error(`expected a ticket, got ${ticket}`);
  return ticket;
};

describe('SocketAdmission', () => {
  it('bounds the sockets of an address that have not said who they are; settling frees the place', () => {
    const admission = new SocketAdmission({ pendingPerAddress: 2, perInstance: 100 });
    const first = admitted(admission.arrive('10.0.0.1'));
    admitted(admission.arrive('10.0.0.1'));
    expect(admission.arrive('10.0.0.1')).toBe('pending_per_address');
    admitted(admission.arrive('10.0.0.2'));
    first.settle();
    first.settle();
    expect(admission.pendingOf('10.0.0.1')).toBe(1);
    admitted(admission.arrive('10.0.0.1'));
    expect(admission.openCount()).toBe(4);
  });

  it('bounds the sockets of an identity; a socket counts once, against its last identity', () => {
    const admission = new SocketAdmission({ pendingPerAddress: 10, perInstance: 100 });
    const [a, b, c] = [1, 2, 3].map(() => admitted(admission.arrive('10.0.0.1')));
    expect(a.claim('key:1', 2)).toBe(true);
    expect(a.claim('key:1', 2)).toBe(true);
    expect(b.claim('key:1', 2)).toBe(true);
    expect(c.claim('key:1', 2)).toBe(false);
    expect(b.claim('key:2', 2)).toBe(true);
    expect([admission.openOf('key:1'), admission.openOf('key:2')]).toEqual([1, 1]);
    expect(c.claim('key:1', 2)).toBe(true);
  });

  it('holds at most the ceiling of sockets, and gives every place back once when one leaves', () => {
    const admission = new SocketAdmission({ pendingPerAddress: 10, perInstance: 2 });
    const first = admitted(admission.arrive('10.0.0.1'));
    first.claim('key:1', 5);
    admitted(admission.arrive('10.0.0.2'));
    expect(admission.arrive('10.0.0.3')).toBe('instance_ceiling');
    expect(admission.pendingOf('10.0.0.3')).toBe(0);
    first.leave();
    first.leave();
    expect([admission.openCount(), admission.pendingOf('10.0.0.1'), admission.openOf('key:1')]).toEqual([1, 0, 0]);
    expect(first.claim('key:1', 5)).toBe(false);
    admitted(admission.arrive('10.0.0.3'));
  });
});

describe('the socket ceiling', () => {
  const limits = (text: string) => {
    const file = join(mkdtempSync(join(tmpdir(), 'limits-')), 'limits');
    writeFileSync(file, text);
    return file;
  };

  it('reads the soft open-file limit from /proc, and nothing when it is unlimited or unreadable', () => {
    expect(openFileLimit(limits('Limit                     Soft Limit           Hard Limit           Units\nMax open files            1024                 1048576              files\n'))).toBe(1024);
    expect(openFileLimit(limits('Max open files            unlimited            unlimited            files\n'))).toBeUndefined();
    expect(openFileLimit('/nonexistent/limits')).toBeUndefined();
  });

  it('is MAX_SOCKETS when set, else half the open-file limit, else a documented default', () => {
    expect(socketCeiling(300, 1024)).toBe(300);
    expect(socketCeiling(undefined, 1024)).toBe(512);
    expect(socketCeiling(undefined, undefined)).toBe(DEFAULT_SOCKET_CEILING);
  });
});
