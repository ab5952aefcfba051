/** How many requests an identity may send per window; plans (auth/plans.ts) say which figures. */
export interface Quota {
  perMinute: number;
  perDay: number;
}
