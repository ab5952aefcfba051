import { registerEnumType } from 'type-graphql';

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

export interface Quota {
  perMinute: number;
  perDay: number;
}

export const PLAN_QUOTAS: Readonly<Record<Exclude<Plan, Plan.ENTERPRISE>, Quota>> = {
  [Plan.FREE]: { perMinute: 60, perDay: 1_000 },
  [Plan.PRO]: { perMinute: 300, perDay: 10_000 },
  [Plan.BUSINESS]: { perMinute: 1_000, perDay: 100_000 },
};

/** The quota of the ADMIN_API_KEY (API.md §4). */
export const ADMIN_KEY_QUOTA: Quota = { perMinute: 10_000, perDay: 1_000_000 };

/** A key's quota: its plan's figures, or its own on ENTERPRISE. */
export function quotaOf(plan: Plan, custom: { perMinute: number | null; perDay: number | null }): Quota {
  if (plan !== Plan.ENTERPRISE) return PLAN_QUOTAS[plan];
  if (custom.perMinute === null || custom.perDay === null) {
    throw new Error('An ENTERPRISE key must carry both custom figures');
  }
  return { perMinute: custom.perMinute, perDay: custom.perDay };
}
