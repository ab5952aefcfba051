import { FairTurns, type Tier } from '../../src/common/fair-turns';
import { ClassDatabaseTime, UnpaidDatabaseTime } from '../../src/db/class-database-time';
import { StatementBudget } from '../../src/db/statement-budget';
import { testClock } from '../helpers/clock';

describe('ClassDatabaseTime', () => {
  it('lets the class start statements while its second of time holds anything, then says how long to wait', () => {
    const clock = testClock();
    const time = new ClassDatabaseTime(500, clock);
    expect(time.waitMs()).toBe(0);
    time.spend(499);
    expect(time.waitMs()).toBe(0);
    time.spend(1);
    // Empty: 1 ms of statement time comes back every 2 ms at 500 ms a second.
    expect(time.waitMs()).toBe(1);
    clock.advance(2);
    expect(time.waitMs()).toBe(0);
  });

  it('makes the class pay back what one statement overdrew, and keeps no more than a second of time', () => {
    const clock = testClock();
    const time = new ClassDatabaseTime(500, clock);
    // A scan may run longer than what was left: its cost is known once it has run.
    time.spend(800);
    expect(time.waitMs()).toBe(601);
    clock.advance(600);
    expect(time.waitMs()).toBe(1);
    clock.advance(1);
    expect(time.waitMs()).toBe(0);
    clock.advance(60_000); // idle for a minute: still one second's worth, not sixty
    time.spend(501);
    expect(time.waitMs()).toBeGreaterThan(0);
  });

  it('charges an anonymous client to both its class and the unpaid one, a FREE key to the unpaid one, a paying key to none', () => {
    const clock = testClock();
    const classes = new UnpaidDatabaseTime(500, 0.5, clock);
    expect(classes.bucketsOf('paying')).toEqual([]);
    expect(classes.bucketsOf('free')).toEqual([classes.unpaid]);
    expect(classes.bucketsOf('anonymous')).toEqual([classes.unpaid, classes.anonymous]);
    for (const bucket of classes.bucketsOf('anonymous')) bucket.spend(260);
    // Anonymous clients' half (250 ms) is spent; FREE keys still have the unpaid class's rest.
    expect(classes.anonymous.waitMs()).toBeGreaterThan(0);
    expect(classes.unpaid.waitMs()).toBe(0);
  });
});

describe('UnpaidDatabaseTime', () => {
  it('runs as many unpaid statements at once as its time a second keeps cores busy, at least one', () => {
    expect([250, 500, 1_000, 1_001, 2_500].map((ms) => new UnpaidDatabaseTime(ms, 0.5).statementsAtOnce)).toEqual([1, 1, 1, 2, 3]);
  });

  it('names the refusal of an unpaid request while its classes’ time is spent, none for a paying one or while time is left', () => {
    const clock = testClock();
    const classes = new UnpaidDatabaseTime(500, 0.5, clock);
    expect(classes.refusalWhileSpent('anonymous')).toBeUndefined();
    classes.anonymous.spend(1_250); // 1,000 ms overdrawn at 250 ms a second: 4 s to pay back
    expect(classes.refusalWhileSpent('free')).toBeUndefined();
    expect(classes.refusalWhileSpent('paying')).toBeUndefined();
    expect(classes.refusalWhileSpent('anonymous')).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 5 });
    expect(classes.refusalWhileSpent('anonymous')?.message).toMatch(/^Anonymous clients together use at most 250 ms of database time a second/);
    clock.advance(4_001);
    expect(classes.refusalWhileSpent('anonymous')).toBeUndefined();
  });
});

describe('StatementBudget with the unpaid classes’ database time', () => {
  const claimant = (tier: Tier) => ({ key: tier, max: 1, weight: 1, tier });

  /** A budget drawing on `classes` for `tier`, with the plan's start bound. */
  const budget = (classes: UnpaidDatabaseTime, tier: Tier, startWithinMs: number) =>
    new StatementBudget({ turns: new FairTurns(10, { anonymousShare: 0.25 }), claimant: claimant(tier), startWithinMs, waitMs: 5_000, classTime: classes.bucketsOf(tier) });

  it('refuses an unpaid request at once, 503 with Retry-After, when its class could not start it within its start bound', async () => {
    const clock = testClock();
    const classes = new UnpaidDatabaseTime(500, 0.5, clock);
    classes.unpaid.spend(1_500); // 1,000 ms overdrawn: 2 s to pay back
    const refused = await budget(classes, 'free', 1_000).acquire().catch((error: unknown) => error);
    expect(refused).toMatchObject({ code: 'SERVICE_UNAVAILABLE', status: 503, retryAfterSeconds: 3 });
    expect((refused as Error).message).toBe(
      'FREE keys and anonymous clients together use at most 500 ms of database time a second on this instance, and that is spent for now; retry in 3 s',
    );
  });

  it('names the anonymous class when its own half is what is spent', async () => {
    const classes = new UnpaidDatabaseTime(500, 0.5, testClock());
    classes.anonymous.spend(1_000);
    const refused = await budget(classes, 'anonymous', 500).acquire().catch((error: unknown) => error);
    expect((refused as Error).message).toMatch(/^Anonymous clients together use at most 250 ms of database time a second/);
  });

  it('lets a request wait for its class’s time when that comes within its start bound, and charges what its statement held', async () => {
    const classes = new UnpaidDatabaseTime(1_000, 0.5);
    classes.unpaid.spend(1_010); // 10 ms overdrawn: about 11 ms to wait
    const free = budget(classes, 'free', 2_000);
    const release = await free.acquire();
    expect(classes.unpaid.waitMs()).toBe(0);
    free.charge(2_000);
    release();
    expect(classes.unpaid.waitMs()).toBeGreaterThan(900);
  });

  it('never holds a paying key back, whatever the unpaid classes spent', async () => {
    const classes = new UnpaidDatabaseTime(500, 0.5, testClock());
    classes.unpaid.spend(100_000);
    const paying = budget(classes, 'paying', 5_000);
    const release = await paying.acquire();
    paying.charge(1_000);
    release();
    expect(classes.unpaid.waitMs()).toBeGreaterThan(100_000);
  });
});
