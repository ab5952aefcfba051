import type { ReadReplicas, Replica } from './read-replicas';
import { isDatabaseUnavailable, sqlState } from './pg-errors';

/**
 * Where one request's reads go: a replica once the request is known to only read (a query
 * document, a GET), else the primary. Chosen once, at that moment, from what the poller last saw.
 */
export class ReadRoute {
  /** The replica this request reads from; undefined: the primary. */
  replica?: Replica;

  constructor(readonly replicas: ReadReplicas) {}

  /** Sends the request's reads to a replica that has replayed `after`, if one is healthy; the replica, or undefined for the primary. */
  toReplica(after?: bigint): Replica | undefined {
    this.replica = this.replicas.pick(after);
    return this.replica;
  }

  /**
   * A statement on `replica` failed as `error`: true when it is to be run again on the primary (a
   * read is safe to repeat), with every later read of the request there too. A conflict with
   * recovery (a statement the replay cancelled) says nothing of the replica's health; a connection
   * refused, lost or not had in time may, and the poller looks at once. A statement cancelled by
   * its timeout is neither retried (it would take as long on the primary) nor held against the
   * replica: one slow statement is not an outage.
   */
  retryOnPrimary(replica: Replica, error: unknown): boolean {
    const code = sqlState(error) ?? (error as { code?: string } | null)?.code ?? '';
    if (code === '57014') return false;
    const conflict = code === '40001' || code === '40P01';
    if (!conflict && !isDatabaseUnavailable(error)) return false;
    if (!conflict) this.replicas.suspect(replica);
    if (this.replica === replica) this.replica = undefined;
    return true;
  }
}
