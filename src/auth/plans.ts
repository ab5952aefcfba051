import { registerEnumType } from 'type-graphql';
import type { Tier } from '../common/fair-turns';
import type { QuotedCaller } from '../limits/identity';
import type { Admission } from '../limits/in-flight';
import type { Quota } from '../limits/quota';
import { ApiKeyRole } from './role';

export enum Plan {
  FREE = 'free',
  PRO = 'pro',
  BUSINESS = 'business',
  ENTERPRISE = 'enterprise',
}

/**
 * What each plan may do, one row a plan, so that a figure changes in one place
 * (docs/contract.md §5 and §9; anonymous clients get FREE's, per address):
 * - `quota`: requests per minute and per day; ENTERPRISE keys carry their own.
 * - `requestsInFlight`: requests at once on an instance, sized for browsers (a page's parallel
 *   queries: 6 connections per origin on HTTP/1.1, all at once on HTTP/2); a request past it waits
 *   for ADMISSION_WAIT_MS behind at most the rest of a minute's quota (admissionOfCaller). Database fairness comes from the next two.
 * - `statementsAtOnce`: statements running at once over all the identity's requests
 *   (db/statement-budget.ts): a FREE client holds at most 1 of the pool's 10 connections and 1
 *   database core, however costly its requests.
 * - `databaseMsPerMinute`: statement time per minute on an instance (db/database-time.ts), on the
 *   model of GitHub's CPU-time secondary limit: FREE a sixth of a database core, BUSINESS a whole
 *   one. An ENTERPRISE key gets more when its agreed quota is large (databaseTimeOfCaller).
 * - `subscriptions`: concurrent subscriptions across all instances.
 * - `sockets`: open WebSockets on an instance: a socket per tab and reconnects, twice the
 *   subscription cap, far below what takes an instance down.
 * - `databaseWeight`: the plan's weight in the fair share of the database pool among the
 *   identities waiting for it (db/statement-budget.ts): doubled at each plan up, anonymous 1.
 * - `startWithinMs`: a request whose statements the pool could not start within this (its share
 *   being what it is) is refused at once rather than queued; anonymous 500 ms, paying plans the
 *   default statement timeout, and none for ENTERPRISE, which waits like an admin key.
 * - `persistedQueriesPerDay`: automatic persisted queries the identity may register per day
 *   (graphql/apq-registrations.ts): a front end ships tens of documents, and each registration
 *   is kept 24 hours in Redis, at most 20 KB, so FREE holds at most 10 MB there a day.
 */
export const PLAN_LIMITS = {
  [Plan.FREE]: { quota: { perMinute: 60, perDay: 1_000 }, requestsInFlight: 16, statementsAtOnce: 1, databaseMsPerMinute: 10_000, subscriptions: 5, sockets: 10, databaseWeight: 2, startWithinMs: 2_000, persistedQueriesPerDay: 500 },
  [Plan.PRO]: { quota: { perMinute: 300, perDay: 10_000 }, requestsInFlight: 32, statementsAtOnce: 2, databaseMsPerMinute: 30_000, subscriptions: 25, sockets: 50, databaseWeight: 4, startWithinMs: 5_000, persistedQueriesPerDay: 2_000 },
  [Plan.BUSINESS]: { quota: { perMinute: 1_000, perDay: 100_000 }, requestsInFlight: 64, statementsAtOnce: 4, databaseMsPerMinute: 60_000, subscriptions: 100, sockets: 200, databaseWeight: 8, startWithinMs: 5_000, persistedQueriesPerDay: 10_000 },
  [Plan.ENTERPRISE]: { quota: null, requestsInFlight: 128, statementsAtOnce: 8, databaseMsPerMinute: 120_000, subscriptions: 500, sockets: 1_000, databaseWeight: 16, startWithinMs: null, persistedQueriesPerDay: 50_000 },
} as const satisfies Readonly<Record<Plan, PlanLimits>>;

export interface PlanLimits {
  quota: Quota | null;
  requestsInFlight: number;
  statementsAtOnce: number;
  databaseMsPerMinute: number;
  subscriptions: number;
  sockets: number;
  databaseWeight: number;
  startWithinMs: number | null;
  persistedQueriesPerDay: number;
}

/** A plan's fixed quota, for the plans that have one. */
export const planQuota = (plan: Exclude<Plan, Plan.ENTERPRISE>): Quota => PLAN_LIMITS[plan].quota;

const perMinute = (plan: Exclude<Plan, Plan.ENTERPRISE>) =>
  `${planQuota(plan).perMinute.toLocaleString('en')} requests per minute, ${planQuota(plan).perDay.toLocaleString('en')} per day.`;

registerEnumType(Plan, {
  name: 'Plan',
  description: 'A rate-limit plan: how many requests a key may send per minute and per day.',
  valuesConfig: {
    FREE: { description: `${perMinute(Plan.FREE)} Also every anonymous client, per address.` },
    PRO: { description: perMinute(Plan.PRO) },
    BUSINESS: { description: perMinute(Plan.BUSINESS) },
    ENTERPRISE: { description: 'Custom figures agreed per key (requestsPerMinute and requestsPerDay).' },
  },
});

/** A request over its identity's bound waits this long for a slot before a 429. */
export const ADMISSION_WAIT_MS = 2_000;

/** An ENTERPRISE key's statement time per request of its minute quota, as BUSINESS gets 60 s for its 1,000. */
const DATABASE_MS_PER_ENTERPRISE_REQUEST = 60;

/** What the per-plan bounds need of a caller; every Caller fits. */
export type PlannedCaller = { kind: 'key'; key: { plan: Plan } } | { kind: 'anonymous' };

/** The caller's plan's row; anonymous: FREE's. */
const limitsOf = (caller: PlannedCaller): PlanLimits => PLAN_LIMITS[caller.kind === 'key' ? caller.key.plan : Plan.FREE];

/**
 * How many requests of the caller may be in flight at once on an instance, and wait. The queue
 * holds the rest of a minute's quota (and at least twice the bound), so that a burst of the whole
 * quota sent at once is answered by its window, every request of it within the quota served, rather
 * than refused by a full queue while the window still has room.
 */
export function admissionOfCaller(caller: PlannedCaller & QuotedCaller): Admission {
  const max = limitsOf(caller).requestsInFlight;
  return { max, queue: Math.max(2 * max, quotaOfCaller(caller).perMinute - max), waitMs: ADMISSION_WAIT_MS };
}

/** Milliseconds of statement time the caller may use per minute on an instance. */
export function databaseTimeOfCaller(caller: PlannedCaller & ({ kind: 'key'; key: { quota: Quota } } | { kind: 'anonymous' })): number {
  const allowance = limitsOf(caller).databaseMsPerMinute;
  if (caller.kind !== 'key' || caller.key.plan !== Plan.ENTERPRISE) return allowance;
  return Math.max(allowance, caller.key.quota.perMinute * DATABASE_MS_PER_ENTERPRISE_REQUEST);
}

/** Concurrent subscriptions of the caller across all instances. */
export const subscriptionCapOf = (caller: PlannedCaller): number => limitsOf(caller).subscriptions;

/** How many sockets of the caller may be open at once on an instance. */
export const socketsOfCaller = (caller: PlannedCaller): number => limitsOf(caller).sockets;

/** Anonymous clients register fewer persisted queries per address than a FREE key: an address is cheap to change. */
export const ANONYMOUS_PERSISTED_QUERIES_PER_DAY = 100;

/** Automatic persisted queries the caller may register per day; an admin key ENTERPRISE's. */
export function persistedQueriesPerDayOf(caller: PlannedCaller & ({ kind: 'key'; key: { role: ApiKeyRole } } | { kind: 'anonymous' })): number {
  if (caller.kind === 'anonymous') return ANONYMOUS_PERSISTED_QUERIES_PER_DAY;
  return PLAN_LIMITS[caller.key.role === ApiKeyRole.ADMIN ? Plan.ENTERPRISE : caller.key.plan].persistedQueriesPerDay;
}

/** The quota of the ADMIN_API_KEY (docs/contract.md §4). */
export const ADMIN_KEY_QUOTA: Quota = { perMinute: 10_000, perDay: 1_000_000 };

/** A key's quota: its plan's figures, or its own on ENTERPRISE. */
export function quotaOf(plan: Plan, custom: { perMinute: number | null; perDay: number | null }): Quota {
  if (plan !== Plan.ENTERPRISE) return planQuota(plan);
  if (custom.perMinute === null || custom.perDay === null) {
    throw new Error('An ENTERPRISE key must carry both custom figures');
  }
  return { perMinute: custom.perMinute, perDay: custom.perDay };
}

/** A key's own quota; anonymous clients are on FREE, per address (docs/contract.md §5). */
export function quotaOfCaller(caller: QuotedCaller): Quota {
  return caller.kind === 'key' ? caller.key.quota : planQuota(Plan.FREE);
}

/**
 * Anonymous clients in the database pool's fair share: each address weighs half a FREE key, its
 * statements wait at most half a second, together they hold at most a quarter of the pool's
 * connections while any key's statements wait, and use at most half the database time of the
 * unpaid classes (UNPAID_DATABASE_MS_PER_SECOND) (docs/contract.md §5, "Fair share of the database").
 */
export const ANONYMOUS_DATABASE = { weight: 1, startWithinMs: 500, poolShare: 0.25, timeShare: 0.5 } as const;

/**
 * The unpaid class (FREE keys and anonymous clients) in the database pool: it never holds the
 * reserve kept for paying plans and admin keys (DATABASE_RESERVE_PERCENT of the pool), and while a
 * paying client's statement waits it holds at most half the pool, so that statement starts once
 * one of theirs ends (docs/contract.md §5, "Fair share of the database").
 */
export const UNPAID_DATABASE = { poolShareWhilePayingWaits: 0.5 } as const;

/** The connections of a pool of `poolSize` kept for paying plans, given DATABASE_RESERVE_PERCENT. */
export const databaseReserveOf = (poolSize: number, percent: number): number => Math.ceil((poolSize * percent) / 100);

/** How the caller's statements take the database's turns (db/statement-budget.ts). */
export interface DatabaseClaim {
  /** Statements at once. */
  max: number;
  weight: number;
  /** Its class: paying plans and admin keys, FREE keys, or anonymous clients. */
  tier: Tier;
  /** Refused at once when its statements could not start within this; null: never refused early. */
  startWithinMs: number | null;
}

/** The caller's claim on the database; an admin key's is ENTERPRISE's, last to be refused. */
export function databaseClaimOf(caller: PlannedCaller & ({ kind: 'key'; key: { role: ApiKeyRole } } | { kind: 'anonymous' })): DatabaseClaim {
  if (caller.kind === 'anonymous') return { max: PLAN_LIMITS[Plan.FREE].statementsAtOnce, weight: ANONYMOUS_DATABASE.weight, tier: 'anonymous', startWithinMs: ANONYMOUS_DATABASE.startWithinMs };
  const admin = caller.key.role === ApiKeyRole.ADMIN;
  const limits = PLAN_LIMITS[admin ? Plan.ENTERPRISE : caller.key.plan];
  const tier = !admin && caller.key.plan === Plan.FREE ? 'free' : 'paying';
  return { max: limitsOf(caller).statementsAtOnce, weight: limits.databaseWeight, tier, startWithinMs: limits.startWithinMs };
}

/**
 * Requests in flight on an instance (every identity's, waiting or running) from which each
 * priority is shed (docs/contract.md §5, "Shedding"): Stripe's load shedder, keeping the last of an
 * instance's capacity for the more important. Anonymous clients first, at half, FREE at three
 * quarters, paying plans at nine tenths; ENTERPRISE and admin keys never.
 */
export const INSTANCE_REQUESTS_IN_FLIGHT = 1_000;
const SHED_AT = { anonymous: 0.5, [Plan.FREE]: 0.75, [Plan.PRO]: 0.9, [Plan.BUSINESS]: 0.9, [Plan.ENTERPRISE]: null } as const;

/** The instance's requests in flight at which the caller's are refused 503; null: never. */
export function shedAtOf(caller: PlannedCaller & ({ kind: 'key'; key: { role: ApiKeyRole } } | { kind: 'anonymous' })): number | null {
  const share = caller.kind === 'anonymous' ? SHED_AT.anonymous : caller.key.role === ApiKeyRole.ADMIN ? null : SHED_AT[caller.key.plan];
  return share === null ? null : Math.floor(INSTANCE_REQUESTS_IN_FLIGHT * share);
}

/**
 * How late the instance's event loop may run, as a multiple of SHED_LOOP_DELAY_MS, before each
 * priority's requests are shed (docs/contract.md §5, "Shedding"): a busy loop delays every
 * request on the instance, so the least important go first. Anonymous at the configured delay,
 * FREE at twice it; paying plans never, for shedding the others is what frees the loop for them.
 */
const SHED_AT_LOOP_DELAY = { anonymous: 1, [Plan.FREE]: 2, [Plan.PRO]: null, [Plan.BUSINESS]: null, [Plan.ENTERPRISE]: null } as const;

/** The event-loop delay (ms) at which the caller's requests are refused 503, given SHED_LOOP_DELAY_MS; null: never. */
export function shedAtLoopDelayOf(caller: PlannedCaller & ({ kind: 'key'; key: { role: ApiKeyRole } } | { kind: 'anonymous' }), baseMs: number): number | null {
  const times = caller.kind === 'anonymous' ? SHED_AT_LOOP_DELAY.anonymous : caller.key.role === ApiKeyRole.ADMIN ? null : SHED_AT_LOOP_DELAY[caller.key.plan];
  return times === null ? null : baseMs * times;
}
