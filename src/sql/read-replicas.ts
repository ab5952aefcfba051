import type { DataSource } from 'typeorm';
import { withTimeout } from '../common/timeout';
import { formatLsn, parseLsn } from './lsn';
import { poolOf } from './pool';

/** How often each instance reads every replica's position and the primary's. */
export const REPLICA_POLL_MS = 100;
/** A poll's statement that takes longer counts as a replica unreachable. */
const POLL_TIMEOUT_MS = 1_000;
/** Primary positions kept to date a replica's: enough for lags a few times past any sane bound. */
const PRIMARY_SAMPLES = 600;

/**
 * `starting`: not polled yet; `ok`: takes reads; `lagging`: further behind than the bound;
 * `down`: unreachable (or its last statement failed to connect), until a poll reaches it.
 */
export type ReplicaState = 'starting' | 'ok' | 'lagging' | 'down';

/** One replica as the poller last saw it. */
export interface Replica {
  /** host:port/database, without credentials: the label of its metrics. */
  readonly name: string;
  readonly dataSource: DataSource;
  state: ReplicaState;
  /** How far behind the primary its replay is, in ms; undefined while unknown. */
  lagMs: number | undefined;
  /** Its replay position (`pg_last_wal_replay_lsn()`), 0 while unknown. */
  replayLsn: bigint;
}

/** What /readyz and /metrics show of a replica. */
export interface ReplicaStatus {
  name: string;
  state: ReplicaState;
  lagMs: number | null;
  replayLsn: string | null;
}

export interface ReadReplicasOptions {
  /** DATABASE_READ_MAX_LAG_MS */
  maxLagMs: number;
  /** Opens `replica`'s pool; called by a poll while it is not open (a replica away at start-up). */
  connect: (replica: Replica) => Promise<void>;
  /** Told when a replica changes state (for the log). */
  onStateChange?: (replica: Replica, previous: ReplicaState, reason?: string) => void;
}

/**
 * The replicas of one primary and what a poller, not each request, knows of them: state, lag and
 * replay position. Lag is dated against the primary's own positions, sampled at each poll: a
 * replica is as far behind as the time since the primary first wrote past its replay position.
 * An idle primary writes nothing, so a replica that has replayed everything is 0 behind however
 * old its last replayed transaction (which `now() - pg_last_xact_replay_timestamp()` would count).
 */
export class ReadReplicas {
  private readonly samples: { lsn: bigint; at: number }[] = [];
  private timer?: NodeJS.Timeout;
  private polling?: Promise<void>;
  private next = 0;
  private closed = false;

  constructor(
    private readonly primary: DataSource,
    readonly replicas: readonly Replica[],
    private readonly options: ReadReplicasOptions,
  ) {}

  /** Polls now, then every REPLICA_POLL_MS until closed; resolves after the first poll. */
  async start(): Promise<void> {
    await this.poll();
    this.schedule();
  }

  /**
   * A replica that may serve a read which must see `after` (a commit's position), taking turns
   * among those that can; undefined when none can, and the primary serves.
   */
  pick(after?: bigint): Replica | undefined {
    const { replicas } = this;
    for (let tried = 0; tried < replicas.length; tried += 1) {
      const replica = replicas[(this.next + tried) % replicas.length];
      if (replica.state === 'ok' && (after === undefined || replica.replayLsn >= after)) {
        this.next = (this.next + tried + 1) % replicas.length;
        return replica;
      }
    }
    return undefined;
  }

  /** A statement could not reach `replica`: it takes no reads until a poll reaches it again. */
  failed(replica: Replica, error: unknown): void {
    this.setState(replica, 'down', (error as Error)?.message);
  }

  status(): ReplicaStatus[] {
    return this.replicas.map(({ name, state, lagMs, replayLsn }) => ({
      name,
      state,
      lagMs: lagMs === undefined ? null : Math.round(lagMs),
      replayLsn: replayLsn === 0n ? null : formatLsn(replayLsn),
    }));
  }

  /** Stops polling and closes the replicas' pools. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    await this.polling;
    await Promise.all(this.replicas.map(({ dataSource }) => (dataSource.isInitialized ? dataSource.destroy().catch(() => undefined) : undefined)));
  }

  /** One poll: the primary's position first, so that a replica at or past it is known caught up. */
  poll(): Promise<void> {
    this.polling ??= this.pollOnce().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), REPLICA_POLL_MS);
    this.timer.unref();
  }

  private async pollOnce(): Promise<void> {
    const primaryLsn = await this.primaryPosition();
    const now = performance.now();
    if (primaryLsn !== undefined) this.sample(primaryLsn, now);
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica, primaryLsn)));
  }

  private async primaryPosition(): Promise<bigint | undefined> {
    try {
      const { rows } = await withTimeout(poolOf(this.primary).query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'), POLL_TIMEOUT_MS);
      return parseLsn(rows[0].lsn);
    } catch {
      // The primary away: the replicas' states stand until it answers again.
      return undefined;
    }
  }

  private async pollReplica(replica: Replica, primaryLsn: bigint | undefined): Promise<void> {
    let replay: bigint | undefined;
    try {
      if (!replica.dataSource.isInitialized) await withTimeout(this.options.connect(replica), POLL_TIMEOUT_MS * 2);
      const { rows } = await withTimeout(
        poolOf(replica.dataSource).query<{ replay: string | null }>(
          // A promoted replica (no longer in recovery) is as far as its own writes.
          'SELECT (CASE WHEN pg_is_in_recovery() THEN pg_last_wal_replay_lsn() ELSE pg_current_wal_lsn() END)::text AS replay',
        ),
        POLL_TIMEOUT_MS,
      );
      replay = rows[0].replay === null ? undefined : parseLsn(rows[0].replay);
    } catch (error) {
      replica.lagMs = undefined;
      this.setState(replica, 'down', error instanceof Error ? error.message : String(error));
      return;
    }
    if (replay === undefined) {
      // Still restoring from its base backup: nothing replayed from the stream yet.
      replica.lagMs = undefined;
      this.setState(replica, 'down', 'no replay position yet');
      return;
    }
    replica.replayLsn = replay;
    if (primaryLsn === undefined) return;
    replica.lagMs = this.lagOf(replay, primaryLsn);
    this.setState(replica, replica.lagMs > this.options.maxLagMs ? 'lagging' : 'ok');
  }

  /** Time since the primary first wrote past `replay`; 0 when the replica has caught up. */
  private lagOf(replay: bigint, primaryLsn: bigint): number {
    if (replay >= primaryLsn) return 0;
    const now = performance.now();
    const firstPast = this.samples.find((sample) => sample.lsn > replay) ?? this.samples[0];
    return now - firstPast.at;
  }

  /** Keeps the times the primary moved, one sample per position. */
  private sample(lsn: bigint, at: number): void {
    const last = this.samples[this.samples.length - 1];
    if (last !== undefined && last.lsn >= lsn) return;
    this.samples.push({ lsn, at });
    if (this.samples.length > PRIMARY_SAMPLES) this.samples.shift();
  }

  private setState(replica: Replica, state: ReplicaState, reason?: string): void {
    if (replica.state === state) return;
    const previous = replica.state;
    replica.state = state;
    this.options.onStateChange?.(replica, previous, reason);
  }
}
