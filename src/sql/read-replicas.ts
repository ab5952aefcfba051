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
 * `down`: unreachable, until a poll reaches it; `detached`: no longer in recovery (promoted, or
 * started on its own) or on another timeline than the primary, so that its positions say nothing
 * of the primary's commits, until it follows the primary again.
 */
export type ReplicaState = 'starting' | 'ok' | 'lagging' | 'down' | 'detached';

/** Every state, in the order the metrics list them. */
export const REPLICA_STATES: readonly ReplicaState[] = ['ok', 'lagging', 'down', 'detached', 'starting'];

/**
 * What a poll reads of a replica: whether it is still replaying, how far, and on which timeline
 * (the one it receives, else its last restart point's: pg_stat_wal_receiver shows its columns only
 * to roles that may read all statistics).
 */
const REPLICA_POSITION = `SELECT pg_is_in_recovery() AS recovering, pg_last_wal_replay_lsn()::text AS replay,
  COALESCE((SELECT received_tli FROM pg_stat_wal_receiver), (SELECT timeline_id FROM pg_control_checkpoint())) AS timeline`;

/** The primary as a poll reads it: its position and its timeline. */
interface PrimaryPosition {
  lsn: bigint;
  timeline: number;
}

/** One replica as the poller last saw it. */
export interface Replica {
  /** host:port/database, without credentials: the label of its metrics. */
  readonly name: string;
  /** The pool its reads take connections from. */
  readonly dataSource: DataSource;
  /** One connection of the poller's own: a pool busy with slow reads does not make the replica look unreachable. */
  readonly probe: DataSource;
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
  /** Opens `replica`'s pool and probe (those not open yet); called by a poll while either is not open (a replica away at start-up). */
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

  /**
   * A statement could not reach `replica`, or not in time: a poll tells now whether it is down
   * (unreachable) or was only busy, rather than one request's failure taking it out for all.
   */
  suspect(replica: Replica): void {
    if (replica.state === 'ok' && !this.closed) void this.poll();
  }

  /** The connections the replicas' pools open at most, together: turns of the scheduler beside the primary's. */
  connections(): number {
    return this.replicas.reduce((sum, { dataSource }) => sum + ('poolSize' in dataSource.options ? (dataSource.options.poolSize ?? 0) : 0), 0);
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
    const sources = this.replicas.flatMap(({ dataSource, probe }) => [dataSource, probe]);
    await Promise.all(sources.map((source) => (source.isInitialized ? source.destroy().catch(() => undefined) : undefined)));
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
    const primary = await this.primaryPosition();
    const now = performance.now();
    if (primary !== undefined) this.sample(primary.lsn, now);
    await Promise.all(this.replicas.map((replica) => this.pollReplica(replica, primary)));
  }

  private async primaryPosition(): Promise<PrimaryPosition | undefined> {
    try {
      const { rows } = await withTimeout(
        // A WAL segment's name starts with its timeline, 8 hex digits: the primary's own, exactly, even just after a promotion.
        poolOf(this.primary).query<{ lsn: string; segment: string }>('SELECT pg_current_wal_lsn()::text AS lsn, pg_walfile_name(pg_current_wal_lsn()) AS segment'),
        POLL_TIMEOUT_MS,
      );
      const lsn = parseLsn(rows[0].lsn);
      return lsn === undefined ? undefined : { lsn, timeline: Number.parseInt(rows[0].segment.slice(0, 8), 16) };
    } catch {
      // The primary away: the replicas' states stand until it answers again.
      return undefined;
    }
  }

  private async pollReplica(replica: Replica, primary: PrimaryPosition | undefined): Promise<void> {
    let seen: { recovering: boolean; replay: string | null; timeline: number | null };
    try {
      if (!replica.dataSource.isInitialized || !replica.probe.isInitialized) await withTimeout(this.options.connect(replica), POLL_TIMEOUT_MS * 2);
      const { rows } = await withTimeout(poolOf(replica.probe).query<typeof seen>(REPLICA_POSITION), POLL_TIMEOUT_MS);
      seen = rows[0];
    } catch (error) {
      replica.lagMs = undefined;
      this.setState(replica, 'down', error instanceof Error ? error.message : String(error));
      return;
    }
    const replay = seen.replay === null ? undefined : parseLsn(seen.replay);
    if (!seen.recovering || (primary !== undefined && seen.timeline !== null && seen.timeline !== primary.timeline)) {
      // Its positions count another history's writes: no read may be sent there on their word.
      replica.lagMs = undefined;
      replica.replayLsn = 0n;
      const reason = seen.recovering ? `on timeline ${seen.timeline}, the primary on ${primary?.timeline}` : 'not in recovery (promoted, or started on its own)';
      this.setState(replica, 'detached', reason);
      return;
    }
    if (replay === undefined) {
      // Still restoring from its base backup: nothing replayed from the stream yet.
      replica.lagMs = undefined;
      this.setState(replica, 'down', 'no replay position yet');
      return;
    }
    replica.replayLsn = replay;
    // The primary away: its lag cannot be dated, nor its timeline checked; its state stands.
    if (primary === undefined) return;
    replica.lagMs = this.lagOf(replay, primary.lsn);
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
