import { openDatabase } from '../../src/db/database';
import { IN_MEMORY } from '../../src/db/in-memory';
import { adminQuery, withDatabase } from '../helpers/database';

/** BENCH_DATABASE names it, so that benches sharing a server keep apart. */
export const BENCH_DATABASE = process.env.BENCH_DATABASE ?? 'petstore_bench';
/** BENCH_PETS sets how many (default 10,000); the keyed attack is meant for 100,000. */
export const PETS = Number(process.env.BENCH_PETS ?? 10_000);
export const CATEGORIES = 20;
export const ORDERS = 50_000;
/** placeOrder allows 10 calls a minute per key: the placeOrder scenario spreads over these. */
export const ORDER_KEYS = 10_000;

/** The key every other scenario sends: ENTERPRISE, with figures no run can reach. */
export const BENCH_KEY = `psk_benchmain${'0'.repeat(32)}`;
/** The keyed attacker of issue 20: a BUSINESS client key (1,000 requests a minute, 16 in flight). */
export const ATTACK_KEY = `psk_benchattack${'0'.repeat(32)}`;
export const orderKey = (i: number) => `psk_benchorder${String(i).padStart(32, '0')}`;
/** The `crowd` scenario's FREE keys (crowd.ts), and its victims' PRO and BUSINESS keys, VICTIM_KEYS of each. */
export const CROWD_KEYS = 30;
export const crowdKey = (i: number) => `psk_benchcrowd${String(i).padStart(32, '0')}`;
export const VICTIM_KEYS = 8;
export const victimKey = (plan: 'pro' | 'business', i: number) => `psk_bench${plan}${String(i).padStart(32, '0')}`;

/**
 * A fresh database, migrated as the gateway migrates it, holding 20 categories, PETS pets (or
 * `pets`) with stock, 50,000 orders and the bench's API keys. Built with set-based SQL: seconds,
 * not minutes, even for a million pets.
 */
export async function createBenchDatabase(serverUrl: string, { name = BENCH_DATABASE, pets = PETS } = {}): Promise<string> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  // Loading a million pets takes longer than a request may.
  const database = await openDatabase({ databaseUrl: url, pgliteDataDir: IN_MEMORY, databaseStatementTimeoutMs: 600_000 });
  const sql = (text: string, params: unknown[] = []) => database.dataSource.query(text, params);
  try {
    await sql(
      `INSERT INTO api_keys (name, key_hash, plan, role, requests_per_minute, requests_per_day)
       VALUES ('bench', encode(sha256($1::bytea), 'hex'), 'enterprise', 'admin', 100000000, 1000000000)`,
      [BENCH_KEY],
    );
    await sql(
      `INSERT INTO api_keys (name, key_hash, plan, role) VALUES ('bench attack', encode(sha256($1::bytea), 'hex'), 'business', 'client')`,
      [ATTACK_KEY],
    );
    await sql(
      `INSERT INTO api_keys (name, key_hash, plan, role, requests_per_minute, requests_per_day)
       SELECT 'bench order ' || i, encode(sha256(('psk_benchorder' || lpad(i::text, 32, '0'))::bytea), 'hex'),
              'enterprise', 'client', 100000000, 1000000000
         FROM generate_series(0, $1 - 1) AS i`,
      [ORDER_KEYS],
    );
    await sql(
      `INSERT INTO api_keys (name, key_hash, plan, role)
       SELECT 'bench crowd ' || i, encode(sha256(('psk_benchcrowd' || lpad(i::text, 32, '0'))::bytea), 'hex'), 'free', 'client'
         FROM generate_series(0, $1 - 1) AS i`,
      [CROWD_KEYS],
    );
    for (const plan of ['pro', 'business'] as const) {
      for (let i = 0; i < VICTIM_KEYS; i += 1) {
        await sql(`INSERT INTO api_keys (name, key_hash, plan, role) VALUES ($1, encode(sha256($2::bytea), 'hex'), $3, 'client')`, [`bench ${plan} victim ${i}`, victimKey(plan, i), plan]);
      }
    }
    await sql(`INSERT INTO categories (name, description) SELECT 'Category ' || i, 'Kind ' || i FROM generate_series(1, $1) AS i`, [CATEGORIES]);
    await sql(
      `INSERT INTO pets (name, category_id, status)
       SELECT 'Pet ' || i, 1 + (i % $2), 'available' FROM generate_series(1, $1) AS i`,
      [pets, CATEGORIES],
    );
    await sql(`INSERT INTO inventory_items (pet_id, quantity, status) SELECT id, 1000000, 'available' FROM pets`);
    await sql(
      `INSERT INTO orders (pet_id, quantity, complete, api_key_id)
       SELECT 1 + (i % $2), 1, i % 3 = 0, (SELECT id FROM api_keys WHERE name = 'bench') FROM generate_series(1, $1) AS i`,
      [ORDERS, PETS],
    );
    await sql('VACUUM ANALYZE');
    // The seed's pages flushed now, not by a checkpoint in the middle of a measured run.
    await sql('CHECKPOINT');
  } finally {
    await database.close();
  }
  return url;
}

export async function dropBenchDatabase(serverUrl: string, name = BENCH_DATABASE): Promise<void> {
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
}
