import { DELIVERY_MS, LATE_MS, Timeline } from './oracle-judge';

/** The oracle's rule (oracle-judge.ts) on timelines made by hand: what it accepts, and what it calls stale. */
describe("the response cache oracle's rule", () => {
  const SLACK = 50;
  const timeline = () => {
    const seen = new Timeline();
    seen.add({ sentAt: 0, receivedAt: 5, body: 'old' });
    seen.add({ sentAt: 1_000, receivedAt: 1_005, body: 'old' });
    seen.add({ sentAt: 1_010, receivedAt: 1_015, body: 'new' });
    return seen;
  };

  it('accepts the current state, and the state before it within the delivery bound and the slack', () => {
    const bracketed = timeline();
    bracketed.add({ sentAt: 2_011, receivedAt: 2_015, body: 'new' });
    expect(bracketed.judge('new', 2_000, 2_010, SLACK)).toEqual({ kind: 'accepted', stalenessMs: 0 });
    expect(timeline().judge('old', 1_005 + DELIVERY_MS + SLACK, 1_200, SLACK)).toEqual({ kind: 'accepted', stalenessMs: DELIVERY_MS + SLACK - 10 });
  });

  it('calls the state before stale once the bound has passed since it was last seen', () => {
    expect(timeline().judge('old', 1_006 + DELIVERY_MS + SLACK, 1_200, SLACK)).toEqual({ kind: 'stale', lastSeenAt: 1_005 });
    expect(timeline().judge('old', 60_000, 60_010, SLACK)).toEqual({ kind: 'stale', lastSeenAt: 1_005 });
  });

  it('calls an answer the reference never gave unknown', () => {
    expect(timeline().judge('other', 1_000, 1_010, SLACK)).toEqual({ kind: 'unknown' });
  });

  it('accepts a state the reference first showed just after the answer came, not one it showed later', () => {
    const seen = new Timeline();
    seen.add({ sentAt: 0, receivedAt: 5, body: 'old' });
    seen.add({ sentAt: 100 + LATE_MS, receivedAt: 110 + LATE_MS, body: 'new' });
    expect(seen.judge('new', 90, 100, SLACK)).toEqual({ kind: 'accepted', stalenessMs: 0 });
    expect(seen.judge('new', 90, 99, SLACK)).toEqual({ kind: 'unknown' });
  });
});
