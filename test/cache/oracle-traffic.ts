import { setTimeout as sleep } from 'node:timers/promises';
import { type CatalogueRequest, categoryCover, petCover, signature } from './catalogue-corpus';
import { type Caller, type Exchange, type Method, now, send } from './oracle-client';
import type { Instance, OracleDeployment } from './oracle-deployment';
import { DELIVERY_MS, type Observation, Timeline } from './oracle-judge';

/** A committed change, as its writer saw it: committed by `committedAt`, after `sentAt`. */
export interface Write {
  writer: number;
  via: 'graphql' | 'sql';
  instance?: string;
  what: string;
  tags: string[];
  sentAt: number;
  committedAt: number;
}

/** One answer of A or B to be judged against the reference. */
export interface Answer {
  request: CatalogueRequest;
  method: Method;
  instance: Instance['name'];
  caller: string;
  exchange: Exchange;
}

/** Two answers that had to be equal, byte for byte, and were not. */
export interface Difference {
  check: 'read-your-writes' | 'sql-write' | 'after-writes';
  answer: Answer;
  reference: Exchange;
}

/**
 * Everything the run saw: the reference's timelines, the writes, the readers' answers and the
 * differences found at once (read-your-writes, SQL writes, the state after the writes).
 */
export class RunRecord {
  readonly start = now();
  readonly timelines = new Map<string, Timeline>();
  readonly writes: Write[] = [];
  readonly answers: Answer[] = [];
  readonly differences: Difference[] = [];
  readonly refusals: string[] = [];
  checked = { readYourWrites: 0, sqlWrites: 0, afterWrites: 0 };

  timeline(request: CatalogueRequest): Timeline {
    const key = signature(request);
    let timeline = this.timelines.get(key);
    if (!timeline) this.timelines.set(key, (timeline = new Timeline()));
    return timeline;
  }

  /** `exchange` unless it is a refusal (not 200, or errors), which is kept apart. */
  accepted(where: string, request: CatalogueRequest, exchange: Exchange): boolean {
    if (exchange.status === 200 && !exchange.body.startsWith('{"errors"')) return true;
    this.refusals.push(`${where} ${request.name} ${JSON.stringify(request.variables)}: ${exchange.status} ${exchange.body.slice(0, 300)}`);
    return false;
  }
}

export interface Traffic {
  deployment: OracleDeployment;
  record: RunRecord;
  corpus: CatalogueRequest[];
  slackMs: number;
  /** Keys of the writers (ADMIN) and of the keyed readers (CLIENT). */
  writerKeys: string[];
  readerKeys: string[];
}

const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const METHODS: Method[] = ['GET', 'POST'];

/** Asks the reference, and keeps its answer in the request's timeline. */
export async function observe(t: Traffic, request: CatalogueRequest, caller: Caller, method: Method): Promise<Exchange> {
  const exchange = await send(t.deployment.r.url, request, caller, method);
  // The reference computes every answer: one it says came from a cache would make the oracle wrong.
  if (exchange.xCache !== undefined) t.record.refusals.push(`R answered ${request.name} with X-Cache: ${exchange.xCache}`);
  if (t.record.accepted('R', request, exchange)) t.record.timeline(request).add(exchange satisfies Observation);
  return exchange;
}

/** An anonymous caller's addresses: a new one every few requests, so that no address reaches its quota. */
export function addresses(reader: number): () => string {
  let sent = 0;
  return () => {
    const n = Math.floor(sent++ / 12);
    return `127.${10 + reader}.${Math.floor(n / 250) % 250}.${1 + (n % 250)}`;
  };
}

/** A reader: asks A or B (GET or POST) and brackets each request with the reference's answers. */
export async function reader(t: Traffic, caller: { key?: string; anonymous?: number }, running: () => boolean): Promise<void> {
  const address = caller.anonymous === undefined ? undefined : addresses(caller.anonymous);
  const label = caller.key ? 'CLIENT key' : `anonymous ${caller.anonymous}`;
  while (running()) {
    const request = pick(t.corpus);
    const method = pick(METHODS);
    const instance = pick([t.deployment.a, t.deployment.b]);
    const as = (): Caller => ({ key: caller.key, from: address?.() });
    await observe(t, request, as(), method);
    const exchange = await send(instance.url, request, as(), method);
    await observe(t, request, as(), method);
    if (t.record.accepted(`${instance.name} (${label})`, request, exchange)) t.record.answers.push({ request, method, instance: instance.name, caller: label, exchange });
  }
}

interface Owned {
  categoryIds: string[];
  petIds: string[];
  created: string[];
  /** Each owned pet's category. */
  categoryOf: Map<string, string>;
}

/**
 * A writer: changes pets and categories only it owns, on A or B through GraphQL or in plain SQL.
 * After a GraphQL write it reads what it changed on the other instance and on the same one, then
 * on the reference: the three must be equal (its own writes, no other writer's). A SQL write comes
 * after the same requests were asked on both instances with a key that never writes; once the
 * delivery bound has passed, both instances must answer them as the reference does, to that key
 * and to the writer's.
 */
export async function writer(t: Traffic, index: number, owned: Owned, running: () => boolean): Promise<void> {
  const key = t.writerKeys[index];
  let count = 0;
  while (running()) {
    count += 1;
    const petId = pick(owned.petIds);
    const categoryId = owned.categoryOf.get(petId)!;
    const roll = Math.random();
    if (roll < 0.2) {
      await sqlWrite(t, index, petId, categoryId, count);
      continue;
    }
    const [on, other] = Math.random() < 0.5 ? [t.deployment.a, t.deployment.b] : [t.deployment.b, t.deployment.a];
    let mutation: { query: string; variables: Record<string, unknown> };
    let what: string;
    let tags: string[];
    let cover: CatalogueRequest[];
    if (roll < 0.45) {
      const name = `w${index}-${count}`;
      const status = pick(['AVAILABLE', 'PENDING', 'SOLD']);
      mutation = { query: 'mutation($id: ID!, $input: PetUpdate!) { updatePet(id: $id, input: $input) { id } }', variables: { id: petId, input: Math.random() < 0.5 ? { name } : { status } } };
      what = `updatePet ${petId} ${JSON.stringify(mutation.variables.input)}`;
      tags = [`pet:${petId}`, 'pets'];
      cover = petCover(petId, categoryId);
    } else if (roll < 0.75) {
      const quantity = Math.floor(Math.random() * 4);
      mutation = { query: 'mutation($petId: ID!, $q: Int!) { updateInventory(petId: $petId, input: { quantity: $q }) { quantity } }', variables: { petId, q: quantity } };
      what = `updateInventory ${petId} quantity ${quantity}`;
      tags = [`stock:${petId}`, 'stock'];
      cover = petCover(petId, categoryId);
    } else if (roll < 0.87) {
      const category = pick(owned.categoryIds);
      const description = `kind of writer ${index}, version ${count}`;
      mutation = { query: 'mutation($id: ID!, $input: CategoryUpdate!) { updateCategory(id: $id, input: $input) { id } }', variables: { id: category, input: { description } } };
      what = `updateCategory ${category} description ${JSON.stringify(description)}`;
      tags = [`category:${category}`, 'categories'];
      cover = categoryCover(category, owned.petIds.find((id) => owned.categoryOf.get(id) === category) ?? petId);
    } else if (roll < 0.94 || owned.created.length === 0) {
      const category = pick(owned.categoryIds);
      mutation = { query: 'mutation($input: NewPet!) { createPet(input: $input) { id } }', variables: { input: { name: `w${index}-new-${count}`, categoryId: category } } };
      what = `createPet in ${category}`;
      tags = ['pets', 'stock'];
      cover = [];
    } else {
      const doomed = owned.created.shift()!;
      owned.petIds.splice(owned.petIds.indexOf(doomed), 1);
      const category = owned.categoryOf.get(doomed)!;
      mutation = { query: 'mutation($id: ID!) { deletePet(id: $id) }', variables: { id: doomed } };
      what = `deletePet ${doomed}`;
      tags = [`pet:${doomed}`, `stock:${doomed}`, 'pets', 'stock'];
      cover = petCover(doomed, category);
    }
    const written = await send(on.url, mutation, { key }, 'POST');
    t.record.writes.push({ writer: index, via: 'graphql', instance: on.name, what, tags, sentAt: written.sentAt, committedAt: written.receivedAt });
    if (written.status !== 200 || written.body.includes('"errors"')) {
      t.record.refusals.push(`writer ${index} on ${on.name}: ${what}: ${written.status} ${written.body.slice(0, 300)}`);
      continue;
    }
    const created = /"createPet":\{"id":"(\d+)"/.exec(written.body)?.[1];
    if (created) {
      owned.petIds.push(created);
      owned.created.push(created);
      owned.categoryOf.set(created, (mutation.variables.input as { categoryId: string }).categoryId);
      t.record.writes[t.record.writes.length - 1].tags.push(`pet:${created}`, `stock:${created}`);
      cover = petCover(created, owned.categoryOf.get(created)!);
    }
    for (const request of cover) {
      const method = pick(METHODS);
      const answers = [
        { instance: other, exchange: await send(other.url, request, { key }, method) },
        { instance: on, exchange: await send(on.url, request, { key }, method) },
      ];
      const reference = await observe(t, request, { key }, method);
      for (const { instance, exchange } of answers) {
        t.record.checked.readYourWrites += 1;
        if (exchange.body !== reference.body) {
          t.record.differences.push({ check: 'read-your-writes', answer: { request, method, instance: instance.name, caller: `writer ${index} (ADMIN key)`, exchange }, reference });
        }
      }
    }
    await sleep(Math.random() * 10);
  }
}

async function sqlWrite(t: Traffic, index: number, petId: string, categoryId: string, count: number): Promise<void> {
  const cover = petCover(petId, categoryId);
  const callers = [
    { label: `writer ${index} (ADMIN key)`, caller: { key: t.writerKeys[index] } },
    // A key that never writes: the cache may serve it whatever it keeps.
    { label: 'CLIENT key', caller: { key: t.readerKeys[0] } },
  ];
  // Kept on both instances first, so that a change they do not hear of is served stale after it.
  for (const request of cover) for (const instance of [t.deployment.a, t.deployment.b]) await send(instance.url, request, callers[1].caller, 'POST');
  const sentAt = now();
  let what: string;
  let tags: string[];
  if (Math.random() < 0.5) {
    what = `UPDATE pets SET name = 'w${index}-sql-${count}' WHERE id = ${petId}`;
    tags = [`pet:${petId}`, 'pets'];
    await t.deployment.sql.query('UPDATE pets SET name = $1 WHERE id = $2', [`w${index}-sql-${count}`, petId]);
  } else {
    const quantity = Math.floor(Math.random() * 4);
    what = `UPDATE inventory_items SET quantity = ${quantity} WHERE pet_id = ${petId}`;
    tags = [`stock:${petId}`, 'stock'];
    await t.deployment.sql.query('UPDATE inventory_items SET quantity = $1, status = stock_status($1, false) WHERE pet_id = $2', [quantity, petId]);
  }
  const committedAt = now();
  t.record.writes.push({ writer: index, via: 'sql', what, tags, sentAt, committedAt });
  // The change is announced by the database itself: by then every instance must show it.
  await sleep(Math.max(0, committedAt + DELIVERY_MS + t.slackMs - now()));
  for (const request of cover) {
    for (const { label, caller } of callers) {
      const method = pick(METHODS);
      const answers = [
        { instance: t.deployment.a, exchange: await send(t.deployment.a.url, request, caller, method) },
        { instance: t.deployment.b, exchange: await send(t.deployment.b.url, request, caller, method) },
      ];
      const reference = await observe(t, request, caller, method);
      for (const { instance, exchange } of answers) {
        t.record.checked.sqlWrites += 1;
        if (exchange.body !== reference.body) t.record.differences.push({ check: 'sql-write', answer: { request, method, instance: instance.name, caller: label, exchange }, reference });
      }
    }
  }
}

/** Splits the categories among `writers` (the rest stay unchanged), each with the pets in them. */
export function ownership(deployment: OracleDeployment, writers: number, ownedCategories: number): Owned[] {
  const owned: Owned[] = Array.from({ length: writers }, () => ({ categoryIds: [], petIds: [], created: [], categoryOf: new Map() }));
  deployment.catalogue.categoryIds.slice(0, ownedCategories).forEach((categoryId, c) => {
    const mine = owned[c % writers];
    mine.categoryIds.push(categoryId);
    for (const petId of deployment.catalogue.petsByCategory.get(categoryId)!) {
      mine.petIds.push(petId);
      mine.categoryOf.set(petId, categoryId);
    }
  });
  return owned;
}

/**
 * Once the writers have stopped and the delivery bound has passed twice over: every request of
 * `corpus` on A and B, as each caller, by GET on one and POST on the other, equal to the reference's answer right after.
 */
export async function settledCheck(t: Traffic, corpus: CatalogueRequest[], callers: { label: string; caller: () => Caller }[]): Promise<void> {
  let turn = 0;
  for (const request of corpus) {
    for (const { label, caller } of callers) {
      // Each instance by one method, the other's by the next request.
      const methods = turn++ % 2 === 0 ? METHODS : [...METHODS].reverse();
      for (const [i, instance] of [t.deployment.a, t.deployment.b].entries()) {
        const method = methods[i];
        const exchange = await send(instance.url, request, caller(), method);
        const reference = await observe(t, request, caller(), method);
        t.record.checked.afterWrites += 1;
        if (exchange.body !== reference.body) {
          t.record.differences.push({ check: 'after-writes', answer: { request, method, instance: instance.name, caller: label, exchange }, reference });
        }
      }
    }
  }
}

