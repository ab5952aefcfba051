import autocannon from 'autocannon';
import { SCENARIOS, type Target } from './scenarios';

/**
 * The load generator, in a process of its own: autocannon on loopback for a bounded time.
 * argv: port scenario target seconds firstRequestNumber [connections, default 10] [requests a
 * second over all connections, default as many as answered]. Prints its result as JSON.
 */
/** An answer's X-Cache (HIT, MISS, BYPASS), `none` when absent; autocannon keeps the header names as sent. */
function xCacheOf(headers: object | undefined): string {
  for (const [name, value] of Object.entries(headers ?? {})) if (name.toLowerCase() === 'x-cache') return String(value).toUpperCase();
  return 'none';
}

async function main(): Promise<void> {
  const [port, scenarioName, target, seconds, first, connections = '10', rate] = process.argv.slice(2);
  const scenario = SCENARIOS[scenarioName];
  let n = Number(first);
  let mismatches = 0;
  let unavailable = 0;
  const statuses: Record<string, number> = {};
  const cache: Record<string, number> = {};
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: Number(connections),
    ...(scenario.requests === undefined ? { duration: Number(seconds) } : { amount: scenario.requests }),
    ...(rate ? { overallRate: Number(rate) } : {}),
    requests: [
      {
        setupRequest: (request) => ({ ...request, ...scenario.request(target as Target, n++) }),
        onResponse: (status, body, _context, headers) => {
          if (status === 503) unavailable += 1;
          statuses[status] = (statuses[status] ?? 0) + 1;
          if (!scenario.verify(body)) mismatches += 1;
          if (scenario.countsCache) {
            const verdict = xCacheOf(headers);
            cache[verdict] = (cache[verdict] ?? 0) + 1;
          }
        },
      },
    ],
  });
  process.stdout.write(
    JSON.stringify({
      requests: result.requests.total,
      reqPerSec: result.requests.average,
      p50: result.latency.p50,
      p90: result.latency.p90,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
      mismatches,
      unavailable,
      statuses,
      ...(scenario.countsCache ? { cache } : {}),
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
