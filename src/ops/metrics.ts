import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { DataSource } from 'typeorm';
import { poolOf } from '../sql/pool';
import { REPLICA_STATES, type ReplicaStatus } from '../sql/read-replicas';
import { BusiestNames } from './busiest-names';

/** Which part of the gateway answered a request, for logs and metrics. */
export type Surface = 'graphql' | 'rest' | 'ops' | 'explorer' | 'none';

/**
 * Distinct GraphQL operation names kept as labels: the busiest ones. A name pushed out by a
 * busier one has its request counts moved to `other` and its durations dropped.
 */
export const MAX_OPERATION_LABELS = 200;

/**
 * The gateway's Prometheus metrics, in a registry of its own (so that several apps in one
 * process, as in the tests, never share counters).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly operations = new BusiestNames(MAX_OPERATION_LABELS);
  /** Requests counted under each kept operation, by `surface status`: moved to `other` when it goes. */
  private readonly requestsOf = new Map<string, Map<string, number>>();

  private readonly requests = new Counter({
    name: 'petstore_http_requests_total',
    help: 'HTTP requests, by surface (graphql, rest, ops, explorer, none), operation and status: `aborted` when the client went away before its answer was sent.',
    labelNames: ['surface', 'operation', 'status'] as const,
    registers: [this.registry],
  });

  private readonly duration = new Histogram({
    name: 'petstore_http_request_duration_seconds',
    help: 'Time to answer an HTTP request, by surface and operation.',
    labelNames: ['surface', 'operation'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [this.registry],
  });

  private readonly refusals = new Counter({
    name: 'petstore_rate_limit_refusals_total',
    help: 'Requests refused by the limiter: `limited` by a window (429), `in-flight` after waiting for a slot (429), `banned` (403), or `shed` by a busy instance (503).',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly admissionWaits = new Counter({
    name: 'petstore_admission_waits_total',
    help: 'Requests that waited for one of their identity’s in-flight slots (most are then served).',
    registers: [this.registry],
  });

  private readonly reads = new Counter({
    name: 'petstore_db_reads_total',
    help: 'Read requests (query documents, REST GETs) with read replicas configured, by where their reads went: `replica`, or `primary` when no healthy replica had seen the caller’s last write.',
    labelNames: ['served_by'] as const,
    registers: [this.registry],
  });

  private readonly bans = new Counter({
    name: 'petstore_rate_limit_bans_total',
    help: 'Bans started for sending while rate limited.',
    registers: [this.registry],
  });

  private readonly published = new Counter({
    name: 'petstore_live_events_published_total',
    help: 'Committed changes this instance received for its subscribers, by type (pet, stock, order).',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });

  private readonly cacheLookups = new Counter({
    name: 'petstore_response_cache_lookups_total',
    help: 'Response cache lookups of cacheable queries: hit (and the level that had it), miss, or bypass (the caller wrote lately, Redis or the change stream is away).',
    labelNames: ['result', 'level'] as const,
    registers: [this.registry],
  });

  private readonly lookupsOf = new Map<string, { inc(): void }>();

  private readonly cachePurges = new Counter({
    name: 'petstore_response_cache_purges_total',
    help: "Answers removed from this process's cache, by reason: change (the change stream), stream_lost, max_age, evicted (the memory bound).",
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly delivered = new Counter({
    name: 'petstore_live_events_delivered_total',
    help: 'Events sent to a subscriber, by subscription (root field).',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  private readonly dropped = new Counter({
    name: 'petstore_live_events_dropped_total',
    help: 'Events not sent to a subscriber that stopped reading (its socket is closed with 1013).',
    labelNames: ['operation'] as const,
    registers: [this.registry],
  });

  private readonly socketRefusals = new Counter({
    name: 'petstore_live_socket_refusals_total',
    help: 'WebSockets refused for a bound: pending_per_address, open_per_identity or instance_ceiling.',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });

  private readonly deliveredOf = new Map<string, { inc(): void }>();

  constructor(dataSource?: DataSource) {
    collectDefaultMetrics({ register: this.registry, prefix: 'petstore_' });
    if (dataSource) this.watchPool(dataSource);
  }

  observeRequest(surface: Surface, operation: string, status: number | 'aborted', seconds: number): void {
    // REST routes, ops paths and `anonymous` are the gateway's own few names; GraphQL clients name the rest.
    if (surface === 'graphql' && operation !== 'anonymous') this.keepOperation(operation);
    this.requests.inc({ surface, operation, status: String(status) });
    this.duration.observe({ surface, operation }, seconds);
    const series = `${surface} ${status}`;
    const counted = this.requestsOf.get(operation) ?? new Map<string, number>();
    counted.set(series, (counted.get(series) ?? 0) + 1);
    this.requestsOf.set(operation, counted);
  }

  observeRefusal(reason: 'limited' | 'banned' | 'in-flight' | 'shed', banStarted: boolean): void {
    this.refusals.inc({ reason });
    if (banStarted) this.bans.inc();
  }

  observeAdmissionWait(): void {
    this.admissionWaits.inc();
  }

  observeLookup(result: 'hit' | 'miss' | 'bypass', level: 'memory' | 'redis' | 'none'): void {
    // Once per cacheable request: each series looked up once, not hashed per call.
    const name = `${result}:${level}`;
    let series = this.lookupsOf.get(name);
    if (!series) this.lookupsOf.set(name, (series = this.cacheLookups.labels({ result, level })));
    series.inc();
  }

  observePurge(reason: string, answers: number): void {
    if (answers > 0) this.cachePurges.inc({ reason }, answers);
  }

  observePublished(type: string): void {
    this.published.inc({ type });
  }

  observeDelivered(operation: string): void {
    // Once per event and subscriber: the series is looked up once per root field, not hashed each time.
    let series = this.deliveredOf.get(operation);
    if (!series) this.deliveredOf.set(operation, (series = this.delivered.labels({ operation })));
    series.inc();
  }

  observeDropped(operation: string, count = 1): void {
    this.dropped.inc({ operation }, count);
  }

  observeSocketRefusal(reason: string): void {
    this.socketRefusals.inc({ reason });
  }

  /** Open WebSockets and active subscriptions by root field, read at each scrape. */
  watchLive(read: () => { sockets: number; subscriptions: Map<string, number> }): void {
    this.gaugeOf('petstore_live_sockets', 'Open WebSockets (graphql-ws).', () => read().sockets);
    new Gauge({
      name: 'petstore_live_subscriptions',
      help: 'Active subscriptions, by subscription (root field).',
      labelNames: ['operation'] as const,
      registers: [this.registry],
      collect() {
        for (const [operation, count] of read().subscriptions) this.set({ operation }, count);
      },
    });
  }

  /** Requests holding an in-flight slot, and waiting for one, read at each scrape. */
  watchInFlight(read: () => { running: number; waiting: number }): void {
    new Gauge({
      name: 'petstore_requests_in_flight',
      help: 'HTTP requests holding one of their identity’s in-flight slots (running), and waiting for one (waiting).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        const { running, waiting } = read();
        this.set({ state: 'running' }, running);
        this.set({ state: 'waiting' }, waiting);
      },
    });
  }

  /** Statement slots taken, over every identity, read at each scrape. */
  watchStatementSlots(read: () => number): void {
    this.gaugeOf('petstore_db_statement_slots', 'Statement slots taken by running statements, over every identity (each identity holds at most its plan’s).', read);
  }

  /** Open subscription streams over SSE (graphql-sse), read at each scrape. */
  watchStreams(read: () => number): void {
    this.gaugeOf('petstore_live_streams', 'Open subscription streams over Server-Sent Events (graphql-sse).', read);
  }

  observeRead(servedBy: 'primary' | 'replica'): void {
    this.reads.inc({ served_by: servedBy });
  }

  /** Each read replica's lag and state, read at each scrape (the poller's last look). */
  watchReplicas(read: () => ReplicaStatus[]): void {
    new Gauge({
      name: 'petstore_db_replica_lag_seconds',
      help: 'How far each read replica’s replay is behind the primary, as last polled (absent while unknown: unreachable).',
      labelNames: ['replica'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { name, lagMs } of read()) if (lagMs !== null) this.set({ replica: name }, lagMs / 1000);
      },
    });
    new Gauge({
      name: 'petstore_db_replica_state',
      help: 'Each read replica’s state, 1 for the one it is in: ok (takes reads), lagging (past DATABASE_READ_MAX_LAG_MS), down (unreachable), detached (promoted, or on another timeline than the primary), starting.',
      labelNames: ['replica', 'state'] as const,
      registers: [this.registry],
      collect() {
        this.reset();
        for (const { name, state } of read()) {
          for (const each of REPLICA_STATES) this.set({ replica: name, state: each }, each === state ? 1 : 0);
        }
      },
    });
  }

  /** A gauge of one unlabelled figure, read at each scrape. */
  private gaugeOf(name: string, help: string, read: () => number): void {
    new Gauge({
      name,
      help,
      registers: [this.registry],
      collect() {
        this.set(read());
      },
    });
  }

  /**
   * Keeps `operation` among the labels, dropping the series of the name it displaced; that name's
   * request counts move to `other`, so that the total never goes down.
   */
  private keepOperation(operation: string): void {
    const displaced = this.operations.observe(operation);
    if (displaced === undefined) return;
    for (const [series, count] of this.requestsOf.get(displaced) ?? []) {
      const [surface, status] = series.split(' ');
      this.requests.remove({ surface, operation: displaced, status });
      this.requests.inc({ surface, operation: 'other', status }, count);
      this.duration.remove({ surface, operation: displaced });
    }
    this.requestsOf.delete(displaced);
  }

  /** Connections of the pg pool, read at each scrape. */
  private watchPool(dataSource: DataSource): void {
    new Gauge({
      name: 'petstore_db_pool_connections',
      help: 'Database pool connections: in_use, idle, and requests waiting for one.',
      labelNames: ['state'] as const,
      registers: [this.registry],
      collect() {
        if (!dataSource.isInitialized) return;
        const stats = poolOf(dataSource);
        this.set({ state: 'in_use' }, stats.totalCount - stats.idleCount);
        this.set({ state: 'idle' }, stats.idleCount);
        this.set({ state: 'waiting' }, stats.waitingCount);
      },
    });
  }
}
