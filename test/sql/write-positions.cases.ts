import { randomBytes } from 'node:crypto';
import Redis from 'ioredis';
import { withRedis } from '../helpers/services';
import { UNKNOWN_POSITION, WritePositions } from '../../src/sql/write-positions';

const TTL_MS = 10_000;

/**
 * Each caller's positions as one instance remembers them and another reads them: the same
 * instance in memory, a second one over the same Redis (it holds nothing in its own memory).
 */
type Instances = (now: () => number) => { writer: WritePositions; reader: WritePositions };

let redis: Redis | undefined;
const prefix = `ryw-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  if (!redis) return;
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
});

const memory: Instances = (now) => {
  const positions = new WritePositions(TTL_MS, undefined, now);
  return { writer: positions, reader: positions };
};
const overRedis: Instances = (now) => {
  redis ??= new Redis(process.env.REDIS_URL as string);
  const client = { client: redis, prefix };
  return { writer: new WritePositions(TTL_MS, client, now), reader: new WritePositions(TTL_MS, client, now) };
};

/** A position as the assertions show it (Jest's workers cannot report a bigint). */
const shown = (lsn: bigint | undefined) => (lsn === UNKNOWN_POSITION ? 'unknown' : String(lsn));

/** The same cases for each store, as read-your-writes relies on either. */
function positionCases(instances: Instances) {
  let t = 1_000_000;
  const now = () => t;
  let caller = 0;
  const identity = () => `caller-${(caller += 1)}`;

  it('counts a write of unknown position for the time any write counts, however often its caller writes since, then gives way to the positions written since', async () => {
    const { writer, reader } = instances(now);
    const id = identity();
    await writer.remember(id, UNKNOWN_POSITION);
    const seen: string[] = [];
    for (let second = 1; second <= 15; second += 1) {
      t += 1_000;
      await writer.remember(id, BigInt(second * 100));
      seen.push(shown(await reader.of(id)));
    }
    const expected = Array.from({ length: 15 }, (_, at) => (at + 1 < TTL_MS / 1_000 ? 'unknown' : String((at + 1) * 100)));
    expect(seen).toEqual(expected);
  });

  it('counts a later write of unknown position from its own time', async () => {
    const { writer, reader } = instances(now);
    const id = identity();
    await writer.remember(id, UNKNOWN_POSITION);
    t += 5_000;
    await writer.remember(id, UNKNOWN_POSITION);
    t += 5_000;
    await writer.remember(id, 500n);
    t += 4_000;
    expect(shown(await reader.of(id))).toBe('unknown');
    t += 1_000;
    expect(shown(await reader.of(id))).toBe('500');
  });

  it('keeps the greatest position of a caller, and none of another', async () => {
    const { writer, reader } = instances(now);
    const id = identity();
    await writer.remember(id, 900n);
    await writer.remember(id, 300n);
    expect(shown(await reader.of(id))).toBe('900');
    expect(shown(await reader.of(identity()))).toBe('undefined');
  });
}

describe('write positions in memory', () => positionCases(memory));
withRedis('write positions in Redis, read by another instance', () => positionCases(overRedis));
