import { registerEnumType } from 'type-graphql';
import type { QuotedCaller } from '../limits/identity';
import type { Admission } from '../limits/in-flight';
import type { Quota } from '../limits/quota';

export enum Plan {
  FREE = 'free',
  PRO = 'pro',
  BUSINESS = 'business',
  ENTERPRISE = 'enterprise',
}

registerEnumType(Plan, {
  name: 'Plan',
  description: 'A rate-limit plan: how many requests a key may send per minute and per day.',
  valuesConfig: {
    FREE: { description: '60 requests per minute, 1,000 per day. Also every anonymous client, per address.' },
    PRO: { description: '300 requests per minute, 10,000 per day.' },
    BUSINESS: { description: '1,000 requests per minute, 100,000 per day.' },
    ENTERPRISE: { description: 'Custom figures agreed per key (requestsPerMinute and requestsPerDay).' },
  },
});

export const PLAN_QUOTAS: Readonly<Record<Exclude<Plan, Plan.ENTERPRISE>, Quota>> = {
  [Plan.FREE]: { perMinute: 60, perDay: 1_000 },
  [Plan.PRO]: { perMinute: 300, perDay: 10_000 },
  [Plan.BUSINESS]: { perMinute: 1_000, perDay: 100_000 },
};

/**
 * Requests one identity may have in flight at once on an instance (docs/contract.md §5). Sized for
 * browsers: a page's parallel queries (6 connections per origin on HTTP/1.1, all at once on
 * HTTP/2) always fit. Database fairness comes from the statements at once below, not from here.
 */
export const PLAN_CONCURRENCY: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 16,
  [Plan.PRO]: 32,
  [Plan.BUSINESS]: 64,
  [Plan.ENTERPRISE]: 128,
};

/** A request over its identity's bound waits this long, behind at most twice the bound, before a 429. */
export const ADMISSION_WAIT_MS = 2_000;

/**
 * Statements one identity may have running at once over all its requests (db/statement-budget.ts).
 * A FREE client (every anonymous address) holds at most 1 of the pool's 10 connections and 1
 * database core, however costly its requests; its requests in flight queue for that one.
 */
export const PLAN_STATEMENTS_AT_ONCE: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 1,
  [Plan.PRO]: 2,
  [Plan.BUSINESS]: 4,
  [Plan.ENTERPRISE]: 8,
};

/**
 * Statement time one identity may use per minute on an instance (db/database-time.ts), on the
 * model of GitHub's secondary limit of CPU time per minute: a FREE client (every anonymous
 * address) a sixth of a database core, BUSINESS a whole one. An ENTERPRISE key gets 120 s or
 * 60 ms for each request of its agreed minute quota, whichever is more, as BUSINESS gets for its 1,000.
 */
export const PLAN_DATABASE_MS_PER_MINUTE: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 10_000,
  [Plan.PRO]: 30_000,
  [Plan.BUSINESS]: 60_000,
  [Plan.ENTERPRISE]: 120_000,
};
const DATABASE_MS_PER_ENTERPRISE_REQUEST = 60;

/** What the concurrency bounds need of a caller; every Caller fits. */
export type PlannedCaller = { kind: 'key'; key: { plan: Plan } } | { kind: 'anonymous' };

const planOf = (caller: PlannedCaller) => (caller.kind === 'key' ? caller.key.plan : Plan.FREE);

/** How many requests of the caller may be in flight at once on an instance, and wait; anonymous: FREE's. */
export function admissionOfCaller(caller: PlannedCaller): Admission {
  const max = PLAN_CONCURRENCY[planOf(caller)];
  return { max, queue: 2 * max, waitMs: ADMISSION_WAIT_MS };
}

/** How many statements of the caller may run at once on an instance; anonymous: FREE's. */
export const statementsAtOnceOfCaller = (caller: PlannedCaller): number => PLAN_STATEMENTS_AT_ONCE[planOf(caller)];

/** Milliseconds of statement time the caller may use per minute on an instance; anonymous: FREE's. */
export function databaseTimeOfCaller(caller: PlannedCaller & ({ kind: 'key'; key: { quota: Quota } } | { kind: 'anonymous' })): number {
  const allowance = PLAN_DATABASE_MS_PER_MINUTE[planOf(caller)];
  if (caller.kind !== 'key' || caller.key.plan !== Plan.ENTERPRISE) return allowance;
  return Math.max(allowance, caller.key.quota.perMinute * DATABASE_MS_PER_ENTERPRISE_REQUEST);
}

/** The quota of the ADMIN_API_KEY (docs/contract.md §4). */
export const ADMIN_KEY_QUOTA: Quota = { perMinute: 10_000, perDay: 1_000_000 };

/** A key's quota: its plan's figures, or its own on ENTERPRISE. */
export function quotaOf(plan: Plan, custom: { perMinute: number | null; perDay: number | null }): Quota {
  if (plan !== Plan.ENTERPRISE) return PLAN_QUOTAS[plan];
  if (custom.perMinute === null || custom.perDay === null) {
    throw new Error('An ENTERPRISE key must carry both custom figures');
  }
  return { perMinute: custom.perMinute, perDay: custom.perDay };
}

/** A key's own quota; anonymous clients are on FREE, per address (docs/contract.md §5). */
export function quotaOfCaller(caller: QuotedCaller): Quota {
  return caller.kind === 'key' ? caller.key.quota : PLAN_QUOTAS[Plan.FREE];
}

/** Concurrent subscriptions per identity, across all instances (docs/contract.md §9). */
export const SUBSCRIPTION_CAPS: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 5,
  [Plan.PRO]: 25,
  [Plan.BUSINESS]: 100,
  [Plan.ENTERPRISE]: 500,
};

/** A key's cap by its plan; anonymous clients get FREE's, per address. */
export function subscriptionCapOf(caller: { kind: 'key'; key: { plan: Plan } } | { kind: 'anonymous' }): number {
  return SUBSCRIPTION_CAPS[caller.kind === 'key' ? caller.key.plan : Plan.FREE];
}

/**
 * Open WebSockets per identity on an instance (docs/contract.md §9 "Sockets"): room for a socket
 * per tab and reconnects, twice the subscription cap, far below what takes an instance down.
 */
export const PLAN_SOCKETS: Readonly<Record<Plan, number>> = {
  [Plan.FREE]: 10,
  [Plan.PRO]: 50,
  [Plan.BUSINESS]: 200,
  [Plan.ENTERPRISE]: 1_000,
};

/** How many sockets of the caller may be open at once on an instance; anonymous: FREE's, per address. */
export const socketsOfCaller = (caller: PlannedCaller): number => PLAN_SOCKETS[planOf(caller)];
