import { type BenchServer, type LoadResult, runLoad } from './processes';

/**
 * Issue 20's keyed attack, on two instances sharing PostgreSQL and Redis: a BUSINESS key keeps
 * KEYED_ATTACK_IN_FLIGHT (default 16, its bound) requests in flight on each instance, each a
 * 100-underscore name search with its count (scenarios.ts `keyedAttacker`). An innocent anonymous
 * visitor reads one pet at a time on each instance, alone, then during the attack.
 */
const IN_FLIGHT = Number(process.env.KEYED_ATTACK_IN_FLIGHT ?? 16);
const WARM_UP_SECONDS = 2;

export interface KeyedAttackRow {
  phase: 'alone' | 'during';
  instance: string;
  innocent: Pick<LoadResult, 'requests' | 'p50' | 'p90' | 'p99' | 'statuses' | 'mismatches'>;
  /** The attacker's answers on this instance, by HTTP status; none while alone. */
  attacker?: LoadResult['statuses'];
  attackerServed?: number;
  /** The instance's CPU time and SQL statements over the phase, per request it answered. */
  cpuMsPerRequest: number;
  statementsPerRequest: number;
}

export async function runKeyedAttack(instances: BenchServer[], seconds: number): Promise<KeyedAttackRow[]> {
  await Promise.all(instances.map((server) => runLoad(server.port, 'innocent', 'gateway', WARM_UP_SECONDS, 0, 1)));
  const rows: KeyedAttackRow[] = [];
  for (const phase of ['alone', 'during'] as const) {
    const before = await Promise.all(instances.map((server) => server.stats()));
    const runs = await Promise.all([
      ...instances.map((server, i) => runLoad(server.port, 'innocent', 'gateway', seconds, 1_000_000 * (rows.length + i + 1), 1)),
      ...(phase === 'during' ? instances.map((server) => runLoad(server.port, 'keyedAttacker', 'gateway', seconds, 0, IN_FLIGHT)) : []),
    ]);
    const after = await Promise.all(instances.map((server) => server.stats()));
    instances.forEach((server, i) => {
      const innocent = runs[i];
      const attacker = runs[instances.length + i] as LoadResult | undefined;
      const answered = innocent.requests + (attacker?.requests ?? 0);
      rows.push({
        phase,
        instance: server.name,
        innocent,
        attacker: attacker?.statuses,
        attackerServed: attacker && attacker.requests - attacker.mismatches,
        cpuMsPerRequest: (after[i].cpuMicros - before[i].cpuMicros) / 1000 / answered,
        statementsPerRequest: (after[i].statements - before[i].statements) / answered,
      });
    });
  }
  return rows;
}

/** `200×n, 429×n`: answers by status, as the tables show them. */
export const statusList = (statuses: Record<string, number> | undefined) =>
  Object.entries(statuses ?? {})
    .map(([status, count]) => `${status}×${count}`)
    .join(', ');

export function keyedAttackTable(rows: KeyedAttackRow[]): string {
  const header =
    `| phase | instance | innocent requests | innocent p50 ms | p90 ms | p99 ms | innocent statuses | attacker statuses (${IN_FLIGHT} in flight) | attacker served | ` +
    `CPU ms/req | SQL/req |`;
  const lines = rows.map(
    (row) =>
      `| ${row.phase} | ${row.instance} | ${row.innocent.requests} | ${row.innocent.p50} | ${row.innocent.p90} | ${row.innocent.p99} | ` +
      `${statusList(row.innocent.statuses)} | ${row.attacker ? statusList(row.attacker) : ''} | ${row.attackerServed ?? ''} | ` +
      `${row.cpuMsPerRequest.toFixed(2)} | ${row.statementsPerRequest.toFixed(1)} |`,
  );
  return [header, `|${'---|'.repeat(11)}`, ...lines].join('\n');
}

/** The goal: the innocent's p99 under 50 ms during the attack, and no 503 anywhere. */
export function keyedAttackMet(rows: KeyedAttackRow[]): boolean {
  const no503 = rows.every((row) => !row.innocent.statuses['503'] && !row.attacker?.['503']);
  return no503 && rows.filter((row) => row.phase === 'during').every((row) => row.innocent.p99 < 50);
}
