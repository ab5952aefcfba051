import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { generateApiKey } from '../../src/auth/key-secret';
import { connectDatabase } from '../../src/db/database';
import { adminQuery, testDatabasePrefix, withDatabase } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess, listeningUrl } from '../helpers/gateway-process';
import { send } from './oracle-client';

export interface Instance {
  name: 'A' | 'B' | 'R';
  url: string;
  child: GatewayProcess;
  output: Promise<{ code: number | string; stdout: string; stderr: string }>;
}

export interface Catalogue {
  /** Category ids, in order; each holds `petsPerCategory` pets. */
  categoryIds: string[];
  petsByCategory: Map<string, string[]>;
}

/**
 * Two instances with the response cache on (A and B, sharing Redis) and a reference with it off
 * (R), on a PostgreSQL database of their own holding a seeded catalogue, under one admin key.
 */
export interface OracleDeployment {
  a: Instance;
  b: Instance;
  r: Instance;
  adminKey: string;
  /** The test's own database, for writes in plain SQL. */
  sql: Client;
  catalogue: Catalogue;
  /** An ENTERPRISE key, limits raised out of the way. */
  issueKey(name: string, role: 'ADMIN' | 'CLIENT'): Promise<string>;
  close(): Promise<void>;
}

/** Unpaid callers are neither shed nor kept off connections: the oracle judges answers, not admission. */
const GATEWAY_ENV = { PORT: '0', SHED_LOOP_DELAY_MS: '0', UNPAID_DATABASE_MS_PER_SECOND: '0', DATABASE_RESERVE_PERCENT: '0', DATABASE_POOL_SIZE: '8', LOG_LEVEL: 'warn' };

export async function startOracleDeployment(categories: number, petsPerCategory: number): Promise<OracleDeployment> {
  const serverUrl = process.env.DATABASE_URL;
  const redisUrl = process.env.REDIS_URL;
  if (!serverUrl || !redisUrl) {
    throw new Error('expected DATABASE_URL and REDIS_URL: the response cache oracle runs in services mode (npm run test:slow with both set)');
  }
  const name = `${testDatabasePrefix()}cache_oracle_${process.pid}`;
  await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await adminQuery(serverUrl, `CREATE DATABASE ${name}`);
  const url = withDatabase(serverUrl, name);
  const started: Instance[] = [];
  let program: GatewayProgram | undefined;
  let sql: Client | undefined;
  const close = async () => {
    for (const { child } of started) child.kill('SIGKILL');
    await Promise.all(started.map(({ output }) => output));
    await sql?.end();
    program?.remove();
    await adminQuery(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  };
  try {
    // Migrated once, as a deployment's first instance would, before any starts.
    await (await connectDatabase(url, { embedded: false })).destroy();
    sql = new Client({ connectionString: url });
    await sql.connect();
    const catalogue = await seedCatalogue(sql, categories, petsPerCategory);
    program = GatewayProgram.transpile();
    const adminKey = generateApiKey();
    const env = { ...GATEWAY_ENV, DATABASE_URL: url, REDIS_URL: redisUrl, REDIS_KEY_PREFIX: `cache-oracle-${randomBytes(6).toString('hex')}`, ADMIN_API_KEY: adminKey };
    const start = async (instanceName: Instance['name'], extra: Record<string, string>) => {
      const child = program!.start({ ...env, ...extra });
      const instance = { name: instanceName, child, output: completion(child), url: '' };
      started.push(instance);
      instance.url = await listeningUrl(child);
      return instance;
    };
    const [a, b, r] = await Promise.all([start('A', { RESPONSE_CACHE: 'on' }), start('B', { RESPONSE_CACHE: 'on' }), start('R', { RESPONSE_CACHE: 'off' })]);
    const issueKey = async (keyName: string, role: 'ADMIN' | 'CLIENT') => {
      const issued = await send(
        r.url,
        {
          query: 'mutation($input: NewApiKey!) { createApiKey(input: $input) { key } }',
          variables: { input: { name: keyName, role, plan: 'ENTERPRISE', requestsPerMinute: 1_000_000, requestsPerDay: 1_000_000_000 } },
        },
        { key: adminKey },
      );
      const key = (JSON.parse(issued.body) as { data?: { createApiKey?: { key: string } } }).data?.createApiKey?.key;
      if (!key) throw new Error(`expected a key, got ${issued.status} ${issued.body}`);
      return key;
    };
    return { a, b, r, adminKey, sql, catalogue, issueKey, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Categories of pets in plain SQL, each pet with stock, its status derived as the gateway derives it. */
async function seedCatalogue(sql: Client, categories: number, petsPerCategory: number): Promise<Catalogue> {
  const catalogue: Catalogue = { categoryIds: [], petsByCategory: new Map() };
  const statuses = ['available', 'available', 'pending', 'sold'];
  const syllables = ['ab', 'ka', 'lo', 'mi', 'ru', 'te', 'zo', 'fi'];
  for (let c = 0; c < categories; c += 1) {
    const { rows } = await sql.query<{ id: string }>('INSERT INTO categories (name, description) VALUES ($1, $2) RETURNING id', [`Kind ${c}`, `The pets of kind ${c}`]);
    const categoryId = rows[0].id;
    const names = Array.from({ length: petsPerCategory }, (_, p) => `${syllables[(c + p) % 8]}${syllables[(p * 3) % 8]} ${c}-${p}`);
    const pets = await sql.query<{ id: string }>(
      'INSERT INTO pets (name, category_id, status) SELECT name, $2, status::pet_status FROM unnest($1::text[], $3::text[]) AS t(name, status) ORDER BY name RETURNING id',
      [names, categoryId, names.map((_, p) => statuses[p % 4])],
    );
    const petIds = pets.rows.map((row) => row.id).sort((x, y) => Number(x) - Number(y));
    await sql.query('INSERT INTO inventory_items (pet_id, quantity, status) SELECT id, q, stock_status(q, false) FROM unnest($1::bigint[], $2::int[]) AS t(id, q)', [
      petIds,
      petIds.map((_, p) => (p * 7) % 5),
    ]);
    catalogue.categoryIds.push(categoryId);
    catalogue.petsByCategory.set(categoryId, petIds);
  }
  return catalogue;
}
