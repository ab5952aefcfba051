/**
 * The oracle's rule for an answer a cached instance gave a reader (times in ms, one clock).
 *
 * The reference instance (the response cache off) is asked the same request right before and right
 * after every reader request, and after every write; each of its answers is an observation: the
 * catalogue's state gave `body` at some instant of [sentAt, receivedAt]. The cache may serve a
 * state that was current up to DELIVERY_MS (100 ms, the contract's bound) plus `slackMs` (the time
 * the last change needed to reach the instance) before the reader sent its request. So an answer
 * sent at `sentAt` and received at `receivedAt` is accepted when the reference gave the same body,
 * byte for byte, in an observation overlapping [sentAt − DELIVERY_MS − slackMs, receivedAt + LATE_MS].
 *
 * An answer the reference gave only before that window is stale: a cache that never purges serves
 * such answers as soon as anything it holds changes. An answer the reference never gave at all is
 * unknown: a state between two observations no observation saw, a state the reference showed only
 * later, or a wrong answer; either way it is a mismatch, since reference observations bracket every
 * reader request.
 */
export const DELIVERY_MS = 100;
/** A reference observation that starts this long after the answer arrived still counts (one clock, two sockets). */
export const LATE_MS = 20;

export interface Observation {
  sentAt: number;
  receivedAt: number;
  body: string;
}

export type Verdict =
  | { kind: 'accepted'; stalenessMs: number }
  | { kind: 'stale'; lastSeenAt: number }
  | { kind: 'unknown' };

/** The reference's answers to one request (document, operation, variables), in the order they came. */
export class Timeline {
  private readonly observations: Observation[] = [];

  add(observation: Observation): void {
    this.observations.push(observation);
  }

  /** The observations that overlap [from, to]. */
  around(from: number, to: number): Observation[] {
    return this.observations.filter((seen) => seen.receivedAt >= from && seen.sentAt <= to).sort((a, b) => a.sentAt - b.sentAt);
  }

  /**
   * The rule above. For an accepted answer, `stalenessMs` is a lower bound of how old its state
   * was when it was sent: from the first reference observation of another body that came after the
   * answer's body was last observed, to `sentAt`; 0 when nothing newer had been observed by then.
   */
  judge(body: string, sentAt: number, receivedAt: number, slackMs: number): Verdict {
    const from = sentAt - DELIVERY_MS - slackMs;
    const same = this.observations.filter((seen) => seen.body === body);
    if (same.length === 0) return { kind: 'unknown' };
    const lastSeen = Math.max(...same.map((seen) => seen.receivedAt));
    if (!same.some((seen) => seen.receivedAt >= from && seen.sentAt <= receivedAt + LATE_MS)) {
      // Seen only before the window: stale; only after it: a state the reference had not reached yet.
      return lastSeen < from ? { kind: 'stale', lastSeenAt: lastSeen } : { kind: 'unknown' };
    }
    const newer = this.observations.filter((seen) => seen.body !== body && seen.sentAt > lastSeen && seen.receivedAt <= sentAt);
    const firstNewer = newer.length === 0 ? sentAt : Math.min(...newer.map((seen) => seen.receivedAt));
    return { kind: 'accepted', stalenessMs: sentAt - firstNewer };
  }
}
