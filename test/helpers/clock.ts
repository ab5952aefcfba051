/** A clock the test moves by hand. */
export interface TestClock {
  (): number;
  set(at: number): void;
  advance(ms: number): void;
}

/** Starts at a fixed instant with a non-zero millisecond part, so rounding shows. */
export function testClock(start = 1_700_000_000_250): TestClock {
  let now = start;
  const clock = (() => now) as TestClock;
  clock.set = (at) => {
    now = at;
  };
  clock.advance = (ms) => {
    now += ms;
  };
  return clock;
}
