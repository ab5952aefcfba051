import type { Exchange } from './oracle-client';
import type { Answer, Difference, RunRecord, Write } from './oracle-traffic';

/** A reader's answer the rule of oracle-judge.ts refused, and why. */
export interface Mismatch {
  verdict: 'stale' | 'unknown' | 'different';
  answer: Answer;
  reference?: Exchange;
}

export interface Judgement {
  mismatches: Mismatch[];
  /**
   * MISSes the reference never gave: computed on the uncached path (the reference's own code), whose
   * fields do not share one snapshot, so that a list's totalCount can come from after a write and
   * its nodes from before it; no observation of the reference may have caught that. Reported, not
   * failed: they say nothing of the cache. A HIT of such an answer is still judged.
   */
  unknownMisses: Mismatch[];
  /** The largest staleness of an accepted answer (a lower bound, oracle-judge.ts), and of an accepted HIT. */
  maxStalenessMs: number;
  maxHitStalenessMs: number;
}

/** Every reader answer against the reference's timeline of its request. */
export function judgeReaders(record: RunRecord, slackMs: number): Judgement {
  const judgement: Judgement = { mismatches: [], unknownMisses: [], maxStalenessMs: 0, maxHitStalenessMs: 0 };
  for (const answer of record.answers) {
    const { body, sentAt, receivedAt } = answer.exchange;
    const verdict = record.timeline(answer.request).judge(body, sentAt, receivedAt, slackMs);
    if (verdict.kind === 'accepted') {
      judgement.maxStalenessMs = Math.max(judgement.maxStalenessMs, verdict.stalenessMs);
      if (answer.exchange.xCache === 'HIT') judgement.maxHitStalenessMs = Math.max(judgement.maxHitStalenessMs, verdict.stalenessMs);
    } else if (verdict.kind === 'unknown' && answer.exchange.xCache === 'MISS') {
      judgement.unknownMisses.push({ verdict: verdict.kind, answer });
    } else {
      judgement.mismatches.push({ verdict: verdict.kind, answer });
    }
  }
  return judgement;
}

/** The figures the run is summed up by, printed once at its end. */
export function figures(record: RunRecord, judgement: Judgement, slackMs: number) {
  const byCache = (value: string | undefined) => record.answers.filter((answer) => answer.exchange.xCache === value).length;
  const reads = record.answers.length;
  const hits = byCache('HIT');
  const ownWrites = record.differences.filter((difference) => difference.check === 'read-your-writes').length;
  return {
    readsChecked: reads,
    hits,
    misses: byCache('MISS'),
    bypasses: byCache('BYPASS'),
    withoutXCache: byCache(undefined),
    hitRatio: reads === 0 ? 0 : Number((hits / reads).toFixed(3)),
    writes: { graphql: record.writes.filter((write) => write.via === 'graphql').length, sql: record.writes.filter((write) => write.via === 'sql').length },
    readYourWritesChecked: record.checked.readYourWrites,
    sqlWriteChecks: record.checked.sqlWrites,
    afterWritesChecked: record.checked.afterWrites,
    mismatches: {
      readers: judgement.mismatches.length,
      stale: judgement.mismatches.filter((mismatch) => mismatch.verdict === 'stale').length,
      unknown: judgement.mismatches.filter((mismatch) => mismatch.verdict === 'unknown').length,
      readYourWrites: ownWrites,
      sqlWrites: record.differences.filter((difference) => difference.check === 'sql-write').length,
      afterWrites: record.differences.filter((difference) => difference.check === 'after-writes').length,
    },
    mismatchesByRequest: countBy([
      ...judgement.mismatches.map((mismatch) => `${mismatch.verdict} ${mismatch.answer.request.name}`),
      ...record.differences.map((difference) => `${difference.check} ${difference.answer.request.name}`),
    ]),
    unknownMissesNotFailed: judgement.unknownMisses.length,
    refusals: record.refusals.length,
    slackMs,
    maxStalenessMs: Math.round(judgement.maxStalenessMs),
    maxHitStalenessMs: Math.round(judgement.maxHitStalenessMs),
  };
}

/**
 * A mismatch as the failure shows it: the request, the instance and its cache headers, the answer,
 * the reference's answers around it, and the last writes that touched it (by the answer's tags,
 * or every write of the last 2 s when it names none).
 */
export function describeMismatch(record: RunRecord, mismatch: Mismatch | Difference): string {
  const { answer } = mismatch;
  const { exchange } = answer;
  const at = (time: number) => `${Math.round(time - record.start)} ms`;
  const tags = exchange.surrogateKey?.split(' ').filter(Boolean);
  const touched = (write: Write) => !tags || write.tags.some((tag) => tags.includes(tag));
  const writes = record.writes.filter((write) => (tags || write.committedAt >= exchange.sentAt - 2_000) && write.sentAt <= exchange.receivedAt && touched(write)).slice(-10);
  const around = record.timeline(answer.request).around(exchange.sentAt - 1_000, exchange.receivedAt + 500).slice(-12);
  const verdict = 'verdict' in mismatch ? mismatch.verdict : mismatch.check;
  return [
    `${verdict}: ${answer.request.name} on ${answer.instance} by ${answer.method}, ${answer.caller}, sent at ${at(exchange.sentAt)}, received at ${at(exchange.receivedAt)}`,
    `  document: ${answer.request.query.replace(/\s+/g, ' ')}`,
    `  variables: ${JSON.stringify(answer.request.variables)}`,
    `  X-Cache: ${exchange.xCache ?? '(none)'}; Surrogate-Key: ${exchange.surrogateKey ?? '(none)'}`,
    `  answer: ${exchange.body}`,
    ...('reference' in mismatch && mismatch.reference ? [`  reference right after (${at(mismatch.reference.sentAt)}–${at(mismatch.reference.receivedAt)}): ${mismatch.reference.body}`, `  first difference at character ${firstDifference(exchange.body, mismatch.reference.body)}`] : []),
    '  reference around that time:',
    ...around.map((seen, i) => `    ${at(seen.sentAt)}–${at(seen.receivedAt)}: ${seen.body === exchange.body ? '(the answer)' : i > 0 && seen.body === around[i - 1].body ? '(as above)' : seen.body}`),
    '  last writes that touched it:',
    ...writes.map((write) => `    writer ${write.writer} ${write.via}${write.instance ? ` on ${write.instance}` : ''} ${at(write.sentAt)}–${at(write.committedAt)}: ${write.what} [${write.tags.join(' ')}]`),
  ].join('\n');
}

function firstDifference(a: string, b: string): number {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i += 1;
  return i;
}

function countBy(names: string[]): { [name: string]: number } {
  const counts: { [name: string]: number } = {};
  for (const name of names) counts[name] = (counts[name] ?? 0) + 1;
  return counts;
}
