import type { Caller } from '../auth/caller';
import { ANONYMOUS_DATABASE, databaseClaimOf, databaseReserveOf, databaseTimeOfCaller, UNPAID_DATABASE } from '../auth/plans';
import { FairTurns } from '../common/fair-turns';
import type { Scope } from '../common/scope';
import type { Config } from '../config';
import { requestServices as servicesWithin, type Services } from '../context';
import { UnpaidDatabaseTime } from '../db/class-database-time';
import { DatabaseTime } from '../db/database-time';
import { StatementBudget } from '../db/statement-budget';
import type { RequestRefusal } from '../errors';
import { FloodLog, type Logger } from '../logger';
import { type ReadYourWritesParts, RequestReads } from '../sql/read-your-writes';

/**
 * One request's services, given who sent it; its statements belong to its scope. `readAfter`: the
 * commit position the client says it has seen (X-Read-After), with read replicas configured.
 */
export type RequestServices = (caller: Caller, identity: string, requestId: string, scope?: Scope, readAfter?: bigint) => Services;

/**
 * Each request gets its own services, whose every statement (one pool checkout) takes from the
 * request's budget: its statements counted, the pool's connections handed out fairly across
 * identities by plan, within each identity's database time a minute (docs/contract.md §5). The
 * budget is handed down this way, not through async context, which on Node 20 would slow every
 * promise of the process.
 */
export function requestServicesOver(
  services: Services,
  config: Pick<Config, 'databaseStatementTimeoutMs' | 'databaseReservePercent' | 'unpaidDatabaseMsPerSecond'>,
  logger: Logger,
  /** Connections in the pools (the primary's and the replicas'): the turns handed out. */
  poolSize: number,
  readYourWrites?: ReadYourWritesParts,
): { requestServices: RequestServices; databaseTime: DatabaseTime; poolTurns: FairTurns; unpaidRefusalOf: (caller: Caller) => RequestRefusal | undefined } {
  // The cores a crowd of FREE keys and anonymous clients may keep busy, whoever else waits.
  const unpaidTime = config.unpaidDatabaseMsPerSecond > 0 ? new UnpaidDatabaseTime(config.unpaidDatabaseMsPerSecond, ANONYMOUS_DATABASE.timeShare) : undefined;
  const poolTurns = new FairTurns(poolSize, {
    reserve: databaseReserveOf(poolSize, config.databaseReservePercent),
    unpaidShare: UNPAID_DATABASE.poolShareWhilePayingWaits,
    anonymousShare: ANONYMOUS_DATABASE.poolShare,
    unpaidMax: unpaidTime?.statementsAtOnce,
  });
  const databaseTime = new DatabaseTime();
  const refusals = new FloodLog(logger);
  const requestServices: RequestServices = (caller, identity, requestId, scope, readAfter) => {
    const { max, weight, tier, startWithinMs } = databaseClaimOf(caller);
    const budget = new StatementBudget({
      turns: poolTurns,
      claimant: { key: identity, max, weight, tier },
      startWithinMs: startWithinMs ?? undefined,
      waitMs: config.databaseStatementTimeoutMs,
      time: { meter: databaseTime, identity, allowanceMs: databaseTimeOfCaller(caller) },
      classTime: unpaidTime?.bucketsOf(tier),
      // A client's own backlog, or a busy pool: a warning, not an error of the gateway's; its
      // floods summed up per identity and reason (the figures of a message set aside).
      onRefusal: (refusal) => refusals.warn(`${identity} ${refusal.message.replace(/\d+/g, '#')}`, { requestId, identity, reason: refusal.message }, 'request refused: over its database allowance'),
      scope,
    });
    return servicesWithin(services, budget, readYourWrites && new RequestReads(readYourWrites, identity, readAfter));
  };
  /** What an unpaid caller's next statement would meet now: its class's database time spent; undefined for paying callers, or while there is time. */
  const unpaidRefusalOf = (caller: Caller): RequestRefusal | undefined => unpaidTime?.refusalWhileSpent(databaseClaimOf(caller).tier);
  return { requestServices, databaseTime, poolTurns, unpaidRefusalOf };
}
