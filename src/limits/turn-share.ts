import { performance } from 'node:perf_hooks';

/** Low-priority requests started in one turn of the instance's event loop, at most. */
export const LOW_PRIORITY_PER_TURN = 4;

/**
 * Low-priority requests start at most `perTurn` to a turn of the event loop; the rest wait, in
 * the order they came, for later turns. Node reads every ready socket in one turn, so a crowd's
 * hundreds of requests read at once would make that turn, and every step of a paying client's
 * request waiting on it (its reply from Redis, its rows), as long as all of them together. Here
 * the turn holds `perTurn` of them, and the next poll for I/O comes after: the waiting crowd
 * costs a queue entry each, and its wait is the instance's lateness for it (Admitter sheds by it).
 */
export class TurnShare {
  private startedThisTurn = 0;
  private readonly waiting: Array<() => void> = [];
  private head = 0;
  private turnEnd: NodeJS.Immediate | undefined;

  /** `now`: the clock a request's wait is read on (ms). */
  constructor(
    private readonly perTurn: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /**
   * Undefined when the request may start now; else a promise of the milliseconds it waited,
   * resolved at its turn.
   */
  take(): Promise<number> | undefined {
    this.turnEnd ??= setImmediate(this.endTurn);
    if (this.head === this.waiting.length && this.startedThisTurn < this.perTurn) {
      this.startedThisTurn += 1;
      return undefined;
    }
    const queuedAt = this.now();
    return new Promise((resolve) => this.waiting.push(() => resolve(this.now() - queuedAt)));
  }

  /** Requests waiting for a turn now. */
  get queued(): number {
    return this.waiting.length - this.head;
  }

  /**
   * After the turn's I/O (setImmediate): the next `perTurn` waiting start now, and count against
   * the next turn's share; while some still wait, this runs again after the next poll.
   */
  private readonly endTurn = (): void => {
    this.turnEnd = undefined;
    this.startedThisTurn = 0;
    while (this.head < this.waiting.length && this.startedThisTurn < this.perTurn) {
      this.startedThisTurn += 1;
      this.waiting[this.head++]();
    }
    if (this.head === this.waiting.length) {
      this.waiting.length = 0;
      this.head = 0;
      return;
    }
    if (this.head > 1024) {
      this.waiting.splice(0, this.head);
      this.head = 0;
    }
    this.turnEnd = setImmediate(this.endTurn);
  };
}
