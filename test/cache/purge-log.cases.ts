import { MAX_REMEMBERED_TAGS, PurgeLog } from '../../src/cache/purge-log';
import { testClock } from '../helpers/clock';

/** The log of purges an answer must postdate (src/cache/purge-log.ts), on a clock moved by hand. */
const HORIZON_MS = 60_000;

function logAt() {
  const clock = testClock();
  return { clock, log: new PurgeLog(HORIZON_MS, clock) };
}

it('lets stand an answer read after the log began, and none read at or before it', () => {
  const { clock, log } = logAt();
  const began = clock();
  expect(log.stands({ startedAt: began, tags: [] })).toBe(false);
  clock.advance(1);
  expect(log.stands({ startedAt: clock(), tags: ['pet:1'] })).toBe(true);
});

it('refuses an answer whose read began at or before a purge of one of its tags, and only of its tags', () => {
  const { clock, log } = logAt();
  clock.advance(10);
  const before = clock();
  clock.advance(5);
  log.purge(['pet:1']);
  const purgedAt = clock();
  expect(log.stands({ startedAt: before, tags: ['pet:2', 'pet:1'] })).toBe(false);
  expect(log.stands({ startedAt: purgedAt, tags: ['pet:1'] })).toBe(false);
  expect(log.stands({ startedAt: before, tags: ['pet:2', 'pets'] })).toBe(true);
  expect(log.stands({ startedAt: purgedAt + 1, tags: ['pet:1'] })).toBe(true);
});

it('refuses everything read before purgeEverything, whatever its tags', () => {
  const { clock, log } = logAt();
  clock.advance(10);
  const before = clock();
  log.purge(['pet:1']);
  clock.advance(10);
  log.purgeEverything();
  expect(log.stands({ startedAt: before, tags: [] })).toBe(false);
  expect(log.stands({ startedAt: before, tags: ['category:9'] })).toBe(false);
  clock.advance(1);
  // The tags purged before were forgotten with everything: nothing read since predates them.
  expect(log.stands({ startedAt: clock(), tags: ['pet:1'] })).toBe(true);
});

it('forgets a purge once the horizon has passed it, and never one within it', () => {
  const { clock, log } = logAt();
  clock.advance(10);
  log.purge(['pet:1']);
  const firstAt = clock();
  clock.advance(HORIZON_MS / 2);
  log.purge(['pet:2']);
  // Within the horizon: an answer read before the purge is still refused.
  expect(log.stands({ startedAt: firstAt - 1, tags: ['pet:1'] })).toBe(false);
  clock.advance(HORIZON_MS / 2 + 1);
  log.purge(['pet:3']);
  // pet:1's purge is past the horizon: only an answer older than any answer may live predates it.
  expect(log.stands({ startedAt: firstAt - 1, tags: ['pet:1'] })).toBe(true);
  expect(log.stands({ startedAt: firstAt - 1, tags: ['pet:2'] })).toBe(false);
});

it('keeps the latest purge of a tag purged twice when forgetting the first', () => {
  const { clock, log } = logAt();
  clock.advance(10);
  log.purge(['pet:1']);
  clock.advance(HORIZON_MS / 2);
  log.purge(['pet:1']);
  const secondAt = clock();
  clock.advance(HORIZON_MS / 2 + 1);
  log.purge(['pet:9']);
  expect(log.stands({ startedAt: secondAt - 1, tags: ['pet:1'] })).toBe(false);
});

it(`counts everything as purged past ${MAX_REMEMBERED_TAGS} tags remembered`, () => {
  const { clock, log } = logAt();
  clock.advance(10);
  const before = clock();
  log.purge(Array.from({ length: MAX_REMEMBERED_TAGS }, (_, i) => `pet:${i + 1}`));
  clock.advance(1);
  const between = clock();
  // At the bound, each tag is still told apart.
  expect(log.stands({ startedAt: before, tags: ['category:1'] })).toBe(true);
  expect(log.stands({ startedAt: between, tags: ['pet:1'] })).toBe(true);
  clock.advance(1);
  log.purge(['category:1']);
  // One more: the log forgets every tag and refuses whatever was read before.
  expect(log.stands({ startedAt: between, tags: ['category:2'] })).toBe(false);
  clock.advance(1);
  expect(log.stands({ startedAt: clock(), tags: ['pet:1', 'category:1'] })).toBe(true);
});
