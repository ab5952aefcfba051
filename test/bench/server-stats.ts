import { getHeapSpaceStatistics } from 'node:v8';
import { Client } from 'pg';

/** What a server process reports of itself between runs. */
export interface ServerStats {
  statements: number;
  cpuMicros: number;
  rss: number;
  heapTotal: number;
  heapUsed: number;
  /** Memory outside V8's heap: Buffers and other native allocations tied to JavaScript objects. */
  external: number;
  /** Each V8 heap space's committed size in bytes (old_space, new_space, code_space, large_object_space…). */
  heapSpaces: Record<string, number>;
}

/**
 * Counts every SQL statement this process's `pg` clients send (the machine's PostgreSQL has no
 * pg_stat_statements), and answers the bench's `stats` messages over IPC.
 */
export function reportStatsOverIpc(onStop: () => Promise<void>): void {
  let statements = 0;
  const query = Client.prototype.query;
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    statements += 1;
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof Client.prototype.query;

  process.on('message', (message: string) => {
    if (message === 'stats') {
      const cpu = process.cpuUsage();
      const { rss, heapTotal, heapUsed, external } = process.memoryUsage();
      const heapSpaces = Object.fromEntries(getHeapSpaceStatistics().map((space) => [space.space_name, space.space_size]));
      const stats: ServerStats = { statements, cpuMicros: cpu.user + cpu.system, rss, heapTotal, heapUsed, external, heapSpaces };
      process.send?.({ stats });
    } else if (message === 'stop') {
      void onStop().then(() => process.exit(0));
    }
  });
}
