import type { SocketBound } from '../refusals';
import { BoundedCounts } from './bounded-counts';

/** The bound a refused socket would have passed: the label of its metric and log line, and its refusal (refusals.ts). */
export type SocketRefusal = SocketBound;

export interface SocketBounds {
  /** Sockets of one client address that have not finished their handshake (graphql-ws connection_init). */
  pendingPerAddress: number;
  /** Sockets open on this instance. */
  perInstance: number;
}

const INSTANCE = 'instance';

/**
 * Long-lived connections (WebSockets, later SSE streams) admitted like requests
 * (docs/contract.md §9 "Sockets"): an instance holds at most `perInstance`, an address at most
 * `pendingPerAddress` that have not said who they are, an identity at most its plan's. Per
 * instance by design, as requests in flight are: it bounds what one instance carries.
 */
export class SocketAdmission {
  private readonly open = new BoundedCounts();
  private readonly pending = new BoundedCounts();
  private readonly identities = new BoundedCounts();

  constructor(private readonly bounds: SocketBounds) {}

  /** A connection arriving from `address`: its ticket, or the bound it would pass. */
  arrive(address: string): SocketTicket | SocketRefusal {
    if (!this.open.enter(INSTANCE, this.bounds.perInstance)) return 'instance_ceiling';
    if (!this.pending.enter(address, this.bounds.pendingPerAddress)) {
      this.open.leave(INSTANCE);
      return 'pending_per_address';
    }
    return new SocketTicket(address, {
      claim: (identity, max) => this.identities.enter(identity, max),
      unclaim: (identity) => this.identities.leave(identity),
      settle: (at) => this.pending.leave(at),
      leave: () => this.open.leave(INSTANCE),
    });
  }

  /** Connections admitted and not yet gone. */
  openCount(): number {
    return this.open.of(INSTANCE);
  }

  /** Connections of `identity` open now. */
  openOf(identity: string): number {
    return this.identities.of(identity);
  }

  /** Connections from `address` that have not said who they are. */
  pendingOf(address: string): number {
    return this.pending.of(address);
  }
}

interface TicketCounts {
  claim(identity: string, max: number): boolean;
  unclaim(identity: string): void;
  settle(address: string): void;
  leave(): void;
}

/** One admitted connection's places in the counts; each is given back once. */
export class SocketTicket {
  private pendingAt: string | undefined;
  private identity: string | undefined;
  private gone = false;

  constructor(address: string, private readonly counts: TicketCounts) {
    this.pendingAt = address;
  }

  /**
   * Counts the connection against `identity`, which may hold `max`; false when it is full. A
   * connection counts against one identity: claiming another gives the first place back.
   */
  claim(identity: string, max: number): boolean {
    if (this.gone) return false;
    if (this.identity === identity) return true;
    if (!this.counts.claim(identity, max)) return false;
    if (this.identity !== undefined) this.counts.unclaim(this.identity);
    this.identity = identity;
    return true;
  }

  /** The connection said who it is: no longer pending. */
  settle(): void {
    if (this.pendingAt === undefined) return;
    this.counts.settle(this.pendingAt);
    this.pendingAt = undefined;
  }

  /** The connection is gone: every place it held is free. */
  leave(): void {
    if (this.gone) return;
    this.gone = true;
    this.settle();
    if (this.identity !== undefined) this.counts.unclaim(this.identity);
    this.identity = undefined;
    this.counts.leave();
  }
}
