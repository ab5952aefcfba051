import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { type CatalogueRequest, petCover, readerCorpus, signature } from './catalogue-corpus';
import { closeConnections, type Exchange, now } from './oracle-client';
import { type OracleDeployment, startOracleDeployment } from './oracle-deployment';
import { DELIVERY_MS } from './oracle-judge';
import { describeMismatch, figures, type Judgement, judgeReaders } from './oracle-report';
import { addresses, observe, ownership, reader, RunRecord, settledCheck, type Traffic, writer } from './oracle-traffic';

/**
 * The response cache's oracle: two instances with the cache on (A and B, sharing Redis) and a
 * reference with it off (R), on one PostgreSQL database, under concurrent writes and reads.
 *
 * - Writers each own categories and their pets, and change them through GraphQL on A or B, or in
 *   plain SQL. After a GraphQL write the writer reads what it changed on both instances with its own
 *   key: each answer must equal R's, asked right after, byte for byte (read-your-writes; nobody
 *   else writes those rows). A SQL write comes after its rows' requests were kept on both instances;
 *   once the delivery bound has passed, the same, for the writer's key and a key that never writes.
 * - Readers (keyed and anonymous) ask a corpus of catalogue documents on A or B by GET or POST. The
 *   rule each answer is judged by is oracle-judge.ts's: equal to an answer R gave for the same
 *   request no earlier than DELIVERY_MS (100 ms) + SLACK_MS before it was sent. A MISS the
 *   reference never gave is the uncached path's (see Judgement.unknownMisses): counted, not failed.
 * - Once the writers stop and 200 ms pass, every request of the corpus is answered by A and B as R
 *   answers it.
 * - At least HIT_FLOOR of the readers' answers were HITs, so that a cache never used cannot pass;
 *   and every reader answer whose state has changed since, judged as if a cache had served it
 *   again once the writes were over, is found stale, so that a cache that never purged could not
 *   pass either. (With the purges turned off, the SQL, reader and after-writes checks fail.)
 *
 * CACHE_ORACLE_RUN_MS and CACHE_ORACLE_SLACK_MS change the run's length and the slack.
 *
 * The figures are printed once at the end and written, with every mismatch, to a temporary directory.
 */
/** The traffic runs this long, and on until it has made ENOUGH, within MAX_RUN_MS (a busy machine serves fewer requests a second). */
const RUN_MS = Number(process.env.CACHE_ORACLE_RUN_MS ?? 12_000);
const MAX_RUN_MS = 150_000;
const ENOUGH = { graphqlWrites: 40, sqlWrites: 8, reads: 500 };
/** The time a change may need to reach an instance, on top of the contract's 100 ms (a busy 2-core CI machine). */
const SLACK_MS = Number(process.env.CACHE_ORACLE_SLACK_MS ?? 250);
const HIT_FLOOR = 0.3;
const CATEGORIES = 8;
const PETS_PER_CATEGORY = 40;
const WRITERS = 3;
/** Categories the writers own; the others never change. */
const OWNED_CATEGORIES = 6;
const KEYED_READERS = 2;
const ANONYMOUS_READERS = 3;
/** Pets of each category the readers ask by id. */
const HOT_PETS_PER_CATEGORY = 1;
const SHOWN = 5;

describe('the response cache never serves a wrong answer (A and B cached, R the reference)', () => {
  let deployment: OracleDeployment;
  let record: RunRecord;
  let judgement: Judgement;
  let corpus: CatalogueRequest[];
  const settled = new Map<string, Exchange>();
  let runMs = 0;
  const made = () => ({
    graphqlWrites: record.writes.filter((write) => write.via === 'graphql').length,
    sqlWrites: record.writes.filter((write) => write.via === 'sql').length,
    reads: record.answers.length,
  });
  const enough = () => {
    const counts = made();
    return counts.graphqlWrites >= ENOUGH.graphqlWrites && counts.sqlWrites >= ENOUGH.sqlWrites && counts.reads >= ENOUGH.reads;
  };

  beforeAll(async () => {
    deployment = await startOracleDeployment(CATEGORIES, PETS_PER_CATEGORY);
    const writerKeys = await Promise.all(Array.from({ length: WRITERS }, (_, w) => deployment.issueKey(`writer ${w}`, 'ADMIN')));
    const readerKeys = await Promise.all(Array.from({ length: KEYED_READERS }, (_, k) => deployment.issueKey(`reader ${k}`, 'CLIENT')));
    const { categoryIds, petsByCategory } = deployment.catalogue;
    const hot = categoryIds.flatMap((id) => petsByCategory.get(id)!.slice(0, HOT_PETS_PER_CATEGORY));
    corpus = readerCorpus(categoryIds, hot);
    record = new RunRecord();
    const traffic: Traffic = { deployment, record, corpus, slackMs: SLACK_MS, writerKeys, readerKeys };
    const started = now();
    const running = () => {
      const elapsed = now() - started;
      return elapsed < MAX_RUN_MS && (elapsed < RUN_MS || !enough());
    };
    const owned = ownership(deployment, WRITERS, OWNED_CATEGORIES);
    await Promise.all([
      ...owned.map((mine, w) => writer(traffic, w, mine, running)),
      ...readerKeys.map((key) => reader(traffic, { key }, running)),
      ...Array.from({ length: ANONYMOUS_READERS }, (_, anonymous) => reader(traffic, { anonymous }, running)),
    ]);
    runMs = now() - started;
    // Twice the contract's delivery bound: every change made is then on every instance.
    await sleep(2 * DELIVERY_MS);
    const anonymous = addresses(ANONYMOUS_READERS);
    const settledCorpus = [...corpus, ...owned.flatMap((mine) => petCover(mine.petIds[0], mine.categoryOf.get(mine.petIds[0])!))];
    await settledCheck(traffic, settledCorpus, [
      { label: 'anonymous', caller: () => ({ from: anonymous() }) },
      { label: 'CLIENT key', caller: () => ({ key: readerKeys[0] }) },
      { label: 'writer 0 (ADMIN key)', caller: () => ({ key: writerKeys[0] }) },
    ]);
    // The reference's answer to each request once everything is settled: what a cache that never purged would be judged against.
    for (const request of corpus) settled.set(signature(request), await observe(traffic, request, { from: anonymous() }, 'POST'));
    judgement = judgeReaders(record, SLACK_MS);
    const purges = { a: await answersPurged(deployment.a.url), b: await answersPurged(deployment.b.url) };
    const summary = { runMs: Math.round(runMs), ...figures(record, judgement, SLACK_MS), answersPurgedByChanges: purges };
    const dir = mkdtempSync(join(tmpdir(), 'cache-oracle-'));
    writeFileSync(join(dir, 'oracle-figures.json'), JSON.stringify({ ...summary, refusals: record.refusals.slice(0, 20) }, null, 2));
    // Every mismatch in full, where the failures show the first few.
    writeFileSync(join(dir, 'oracle-mismatches.txt'), [
        ...[...judgement.mismatches, ...record.differences].map((mismatch) => describeMismatch(record, mismatch)),
        ...judgement.unknownMisses.map((mismatch) => `(not failed) ${describeMismatch(record, mismatch)}`),
      ].join('\n\n'));
    console.log(`response cache oracle (figures and mismatches in ${dir}):\n${JSON.stringify(summary, null, 2)}`);
  }, 300_000);

  afterAll(async () => {
    closeConnections();
    await deployment?.close();
  });

  const shown = (found: Parameters<typeof describeMismatch>[1][]) => found.slice(0, SHOWN).map((mismatch) => describeMismatch(record, mismatch));
  const differences = (check: string) => record.differences.filter((difference) => difference.check === check);

  it('ran the traffic it describes: enough writes of both kinds and reads, no refusals', () => {
    expect(record.refusals.slice(0, SHOWN)).toEqual([]);
    expect(enough() ? 'enough' : { ...made(), runMs }).toBe('enough');
  });

  it('reads its own writes on either instance: every answer equal to the reference right after', () => {
    expect(record.checked.readYourWrites).toBeGreaterThan(0);
    expect(shown(differences('read-your-writes'))).toEqual([]);
  });

  it('shows a change made in plain SQL on both instances once the delivery bound has passed', () => {
    expect(record.checked.sqlWrites).toBeGreaterThan(0);
    expect(shown(differences('sql-write'))).toEqual([]);
  });

  it(`serves readers only answers the reference gave no earlier than ${DELIVERY_MS} ms + the slack before they asked`, () => {
    expect(shown(judgement.mismatches)).toEqual([]);
  });

  it('answers every request as the reference does once the writes have stopped', () => {
    expect(record.checked.afterWrites).toBeGreaterThan(0);
    expect(shown(differences('after-writes'))).toEqual([]);
  });

  it(`serves at least ${HIT_FLOOR * 100}% of the readers' requests from the cache`, () => {
    const hits = record.answers.filter((answer) => answer.exchange.xCache === 'HIT').length;
    expect(hits / record.answers.length).toBeGreaterThanOrEqual(HIT_FLOOR);
  });

  it('would fail a cache that never purged: an answer whose state has changed since, served again once the writes are over, is stale', () => {
    // What the readers were served, judged as if a cache had kept it and served it again when the reference last answered.
    const replayed = record.answers.map((answer) => {
      const latest = settled.get(signature(answer.request))!;
      return { answer, latest, verdict: record.timeline(answer.request).judge(answer.exchange.body, latest.sentAt, latest.receivedAt, SLACK_MS) };
    });
    const changedSince = replayed.filter(({ answer, latest }) => answer.exchange.body !== latest.body);
    expect(changedSince.length).toBeGreaterThan(0);
    expect(changedSince.filter(({ verdict }) => verdict.kind === 'accepted').map(({ answer }) => `${answer.request.name} ${JSON.stringify(answer.request.variables)}`)).toEqual([]);
    // And the state of that moment is accepted then: the rule does not refuse everything.
    const current = replayed.filter(({ answer, latest }) => answer.exchange.body === latest.body);
    expect(current.filter(({ verdict }) => verdict.kind !== 'accepted').map(({ answer }) => answer.request.name)).toEqual([]);
  });
});

/** How many answers an instance's change stream purged from its memory (its /metrics). */
async function answersPurged(instanceUrl: string): Promise<number> {
  const text = await (await fetch(new URL('/metrics', instanceUrl))).text();
  const line = text.split('\n').find((each) => each.startsWith('petstore_response_cache_purges_total{reason="change"}'));
  return line === undefined ? 0 : Number(line.split(' ').pop());
}
