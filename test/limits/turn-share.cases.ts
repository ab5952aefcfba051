import { setImmediate as nextTurn } from 'node:timers/promises';
import { Plan, shedAtLoopDelayOf } from '../../src/auth/plans';
import { Scope } from '../../src/common/scope';
import { CROWDING_REQUESTS } from '../../src/limits/admit';
import { TurnShare } from '../../src/limits/turn-share';
import { anonymous, keyOf, testAdmitter } from './helpers/admitter';

// The event loop's turns, shared by the low priorities (docs/contract.md §5, "Shedding").

/** Takes `count` turns of `share` at once; each entry says in which turn after this one it started (0: now). */
function takeAll(share: TurnShare, count: number): { startedIn: number[]; turns: () => Promise<void> } {
  const startedIn: number[] = [];
  let turn = 0;
  for (let i = 0; i < count; i += 1) {
    const waiting = share.take();
    if (waiting === undefined) startedIn.push(0);
    else void waiting.then(() => (startedIn[i] = turn));
  }
  return {
    startedIn,
    // One turn of the loop: its check phase, where the share starts the next few.
    turns: async () => {
      turn += 1;
      await nextTurn();
    },
  };
}

describe('turns shared by the low priorities', () => {
  it('starts at most its share in a turn, the rest in later turns, in the order they came', async () => {
    const share = new TurnShare(2);
    const { startedIn, turns } = takeAll(share, 7);
    expect(startedIn).toEqual([0, 0]);
    expect(share.queued).toBe(5);
    for (let i = 0; i < 3; i += 1) await turns();
    expect(startedIn).toEqual([0, 0, 1, 1, 2, 2, 3]);
    expect(share.queued).toBe(0);
  });

  it('lets nothing jump the queue: a request that comes while others wait waits behind them', async () => {
    const share = new TurnShare(1);
    expect(share.take()).toBeUndefined();
    const first = share.take();
    expect(first).toBeInstanceOf(Promise);
    await nextTurn();
    // The turn's share went to the one waiting; the next comes after it.
    expect(share.take()).toBeInstanceOf(Promise);
    await first;
  });

  it('answers each request with how long it waited, on its clock', async () => {
    let now = 0;
    const share = new TurnShare(1, () => now);
    share.take();
    const waited = share.take()!;
    now = 75;
    await nextTurn();
    await expect(waited).resolves.toBe(75);
  });
});

describe('the admitter and the turns', () => {
  const admitterWithTurns = (share: TurnShare) =>
    testAdmitter({
      admissionOf: () => ({ max: 16, queue: 32, waitMs: 1_000 }),
      loopDelay: { ms: () => 0, shedAtOf: (caller) => shedAtLoopDelayOf(caller, 50), turns: share },
    });

  it('makes only the priorities shed by a late loop wait for a turn: a paying key never does', async () => {
    const share = new TurnShare(1);
    const admitter = admitterWithTurns(share);
    // The turn's one share goes to the first anonymous request; the second waits, the PRO key's does not.
    const first = admitter.admit(anonymous('10.0.0.1'), '10.0.0.1', new Scope());
    const second = admitter.admit(anonymous('10.0.0.2'), '10.0.0.2', new Scope());
    const pro = admitter.admit(keyOf(Plan.PRO), 'pro', new Scope());
    expect(share.queued).toBe(1);
    await expect(Promise.all([first, second, pro])).resolves.toEqual([expect.objectContaining({ decision: expect.anything() }), expect.objectContaining({ decision: expect.anything() }), expect.objectContaining({ decision: expect.anything() })]);
  });

  it('sheds a crowding request that waited for its turn longer than its priority keeps, as it would a late loop', async () => {
    let now = 0;
    const share = new TurnShare(CROWDING_REQUESTS, () => now);
    const admitter = admitterWithTurns(share);
    const address = '10.0.0.1';
    const caller = anonymous(address);
    // CROWDING_REQUESTS start in this turn and run on; the next waits for a turn, 50 ms by its clock.
    const running = Array.from({ length: CROWDING_REQUESTS }, () => admitter.admit(caller, address, new Scope()));
    const late = admitter.admit(caller, address, new Scope());
    expect(share.queued).toBe(1);
    now = 50;
    for (const admitted of await Promise.all(running)) expect(admitted.refusal).toBeUndefined();
    await expect(late).resolves.toMatchObject({ refusal: { code: 'SERVICE_UNAVAILABLE', status: 503, message: expect.stringMatching(/^This instance is busy: its work runs 50 ms late/) } });
  });

  it('lets a client with fewer requests on the instance start after its wait, however long', async () => {
    let now = 0;
    const share = new TurnShare(1, () => now);
    const admitter = admitterWithTurns(share);
    expect(share.take()).toBeUndefined();
    const visitor = admitter.admit(anonymous('10.0.0.1'), '10.0.0.1', new Scope());
    now = 10_000;
    await expect(visitor).resolves.toEqual({ decision: expect.objectContaining({ kind: 'allowed' }) });
  });

  it('answers nothing to a request whose client went away while it waited for its turn', async () => {
    const share = new TurnShare(1);
    const admitter = admitterWithTurns(share);
    expect(share.take()).toBeUndefined();
    const scope = new Scope();
    const gone = admitter.admit(anonymous('10.0.0.1'), '10.0.0.1', scope);
    scope.abort();
    await expect(gone).resolves.toEqual({});
  });
});
