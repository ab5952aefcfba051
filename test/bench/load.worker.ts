import autocannon from 'autocannon';
import { SCENARIOS, type Target } from './scenarios';

/**
 * The load generator, in a process of its own: autocannon with 10 connections on loopback for a
 * bounded time. argv: port scenario target seconds firstRequestNumber. Prints its result as JSON.
 */
async function main(): Promise<void> {
  const [port, scenarioName, target, seconds, first] = process.argv.slice(2);
  const scenario = SCENARIOS[scenarioName];
  let n = Number(first);
  let mismatches = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections: 10,
    duration: Number(seconds),
    requests: [
      {
        setupRequest: (request) => ({ ...request, ...scenario.request(target as Target, n++) }),
        onResponse: (_status, body) => {
          if (!scenario.verify(body)) mismatches += 1;
        },
      },
    ],
  });
  process.stdout.write(
    JSON.stringify({
      requests: result.requests.total,
      reqPerSec: result.requests.average,
      p50: result.latency.p50,
      p99: result.latency.p99,
      errors: result.errors + result.timeouts + result.non2xx,
      mismatches,
    }),
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
