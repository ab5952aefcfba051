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
   * read is safe to repeat), with every later read of the request there too. An unreachable
   * replica takes no reads until a poll reaches it; a conflict with recovery (a statement the
   * replay cancelled) says nothing of its health.
   */
  retryOnPrimary(replica: Replica, error: unknown): boolean {
    const conflict = ['40001', '40P01'].includes(sqlState(error) ?? (error as { code?: string } | null)?.code ?? '');
    if (!conflict && !isDatabaseUnavailable(error)) return false;
    if (!conflict) this.replicas.failed(replica, error);
    if (this.replica === replica) this.replica = undefined;
    return true;
  }
}
