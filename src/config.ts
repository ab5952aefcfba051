import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { BlockList, isIP } from 'node:net';

/**
 * The gateway's settings, read once from the environment (docs/operating.md "Configuration").
 * A wrong value stops start-up with a message naming the variable and what it expects.
 */
export interface Config {
  port: number;
  /** The address to bind: an IP address or a host name. */
  host: string;
  /** Unset: an embedded PostgreSQL (PGlite) is started in-process. */
  databaseUrl?: string;
  pgliteDataDir: string;
  /** Connections in each instance's PostgreSQL pool (the embedded database always takes one). */
  databasePoolSize: number;
  /** Percent of each pool's connections kept for paying plans and admin keys: FREE keys and anonymous clients never hold them (DATABASE_RESERVE_PERCENT). */
  databaseReservePercent: number;
  /** `transaction`: DATABASE_URL is a transaction-mode pooler (PgBouncer), so nothing lives in a pooled session. */
  databasePoolMode: DatabasePoolMode;
  /** Straight to PostgreSQL, for what needs a session (LISTEN, the migrations' lock); required in transaction mode. */
  databaseDirectUrl?: string;
  /** Streaming replicas of DATABASE_URL that serve reads (DATABASE_READ_URLS); empty: the primary serves everything. */
  databaseReadUrls: string[];
  /** A replica further behind than this takes no reads until it catches up. */
  databaseReadMaxLagMs: number;
  /** A statement running longer is cancelled by PostgreSQL; a request then gets 503. */
  databaseStatementTimeoutMs: number;
  /** How long opening a PostgreSQL connection may take. */
  databaseConnectTimeoutMs: number;
  /** Unset: limiter state lives in this process. */
  redis?: RedisTopology;
  /** Starts every key the gateway writes in Redis: deployments sharing a Redis keep apart. */
  redisKeyPrefix: string;
  /** Always accepted, with the admin role. Generated in embedded mode when unset. */
  adminApiKey?: string;
  banThreshold: number;
  banSeconds: number;
  /** How long a banned client's request waits before its 403 (BAN_PAUSE_MS). */
  banPauseMs: number;
  /**
   * The event-loop delay at which anonymous requests are shed, FREE keys' at twice it, and while
   * on, the two share the loop's turns (TurnShare); 0: never (SHED_LOOP_DELAY_MS; embedded, 0 by default).
   */
  shedLoopDelayMs: number;
  /** Statement time a second FREE keys and anonymous clients may use together on an instance, anonymous half of it; 0: unbounded (UNPAID_DATABASE_MS_PER_SECOND; 500 with a PostgreSQL server, embedded 0). */
  unpaidDatabaseMsPerSecond: number;
  petsSunset: Date;
  /** The response cache (RESPONSE_CACHE): on unless turned off. */
  responseCache: boolean;
  /** The longest a cached answer is kept, whatever purges it first (RESPONSE_CACHE_MAX_AGE_SECONDS). */
  responseCacheMaxAgeSeconds: number;
  /** The bound of the cache's memory level in each process (RESPONSE_CACHE_MAX_BYTES). */
  responseCacheMaxBytes: number;
  /**
   * Whose X-Forwarded-For names the client (TRUST_PROXY): nobody's (false), any peer's (true), or
   * only that of a peer in the list, the proxies' addresses and ranges.
   */
  trustProxy: boolean | BlockList;
  maxQueryCost: number;
  /** Open WebSockets per instance; unset: half the process's open-file limit (limits/open-file-limit.ts). */
  maxSockets?: number;
  corsOrigins: string[];
  introspection: boolean;
  /** What `/graphql` shows a browser: the gateway's own GraphiQL, Apollo Sandbox (from Apollo's CDN), or a page saying it is off. */
  explorer: Explorer;
  logLevel: string;
  /** LOG_FLUSH_MS: the longest a log line waits in the buffer. */
  logFlushMs: number;
  production: boolean;
  /** TRUSTED_DOCUMENTS: the persisted-documents manifest, read and checked for shape at start-up. */
  trustedDocuments?: TrustedDocumentsManifest;
  /** TRUSTED_DOCUMENTS_ONLY: which callers may send only the manifest's documents. */
  trustedDocumentsOnly: TrustedDocumentsOnly;
}

/** A persisted-documents manifest: each document's text by the hex sha256 of that text. */
export interface TrustedDocumentsManifest {
  file: string;
  documents: Map<string, string>;
}

export const DATABASE_POOL_MODES = ['session', 'transaction'] as const;
export type DatabasePoolMode = (typeof DATABASE_POOL_MODES)[number];

export const EXPLORERS = ['sandbox', 'graphiql', 'off'] as const;
export type Explorer = (typeof EXPLORERS)[number];

export const TRUSTED_DOCUMENTS_ONLY = ['off', 'anonymous', 'keys', 'all'] as const;
export type TrustedDocumentsOnly = (typeof TRUSTED_DOCUMENTS_ONLY)[number];

export interface RedisNode {
  host: string;
  port: number;
}

/** Options every node of a cluster or Sentinel deployment shares, taken from its `redis[s]://` entries. */
export interface RedisNodeOptions {
  tls: boolean;
  username?: string;
  password?: string;
}

/** One Redis (REDIS_URL), a Redis Cluster (REDIS_CLUSTER_NODES), or a master found through Sentinel. */
export type RedisTopology =
  | { kind: 'single'; url: string }
  | ({ kind: 'cluster'; nodes: RedisNode[] } & RedisNodeOptions)
  | ({ kind: 'sentinel'; sentinels: RedisNode[]; name: string } & RedisNodeOptions);

export class ConfigError extends Error {
  constructor(variable: string, expected: string, got: string) {
    super(`${variable}: expected ${expected}, got ${JSON.stringify(got)}`);
    this.name = 'ConfigError';
  }
}

/**
 * Every variable loadConfig reads, each documented once, in the "Configuration" table of docs/operating.md
 * (test/config-docs.cases.ts holds the two to each other). The readers below take only these names.
 */
export const ENVIRONMENT_VARIABLES = [
  'NODE_ENV',
  'PORT',
  'HOST',
  'DATABASE_URL',
  'PGLITE_DATA_DIR',
  'DATABASE_POOL_SIZE',
  'DATABASE_RESERVE_PERCENT',
  'DATABASE_POOL_MODE',
  'DATABASE_DIRECT_URL',
  'DATABASE_READ_URLS',
  'DATABASE_READ_MAX_LAG_MS',
  'DATABASE_STATEMENT_TIMEOUT_MS',
  'DATABASE_CONNECT_TIMEOUT_MS',
  'REDIS_URL',
  'REDIS_CLUSTER_NODES',
  'REDIS_SENTINELS',
  'REDIS_SENTINEL_NAME',
  'REDIS_KEY_PREFIX',
  'ADMIN_API_KEY',
  'BAN_THRESHOLD',
  'BAN_SECONDS',
  'BAN_PAUSE_MS',
  'SHED_LOOP_DELAY_MS',
  'UNPAID_DATABASE_MS_PER_SECOND',
  'PETS_SUNSET',
  'RESPONSE_CACHE',
  'RESPONSE_CACHE_MAX_AGE_SECONDS',
  'RESPONSE_CACHE_MAX_BYTES',
  'TRUST_PROXY',
  'MAX_QUERY_COST',
  'MAX_SOCKETS',
  'CORS_ORIGINS',
  'GRAPHQL_INTROSPECTION',
  'GRAPHQL_EXPLORER',
  'LOG_LEVEL',
  'LOG_FLUSH_MS',
  'TRUSTED_DOCUMENTS',
  'TRUSTED_DOCUMENTS_ONLY',
] as const;
export type EnvironmentVariable = (typeof ENVIRONMENT_VARIABLES)[number];

/**
 * The database's defaults, also those of a DataSource made without a Config (db/data-source.ts):
 * bounds that keep an unreachable or stuck database from holding requests.
 */
export const DATABASE_DEFAULTS = Object.freeze({
  poolSize: 10,
  statementTimeoutMs: 5_000,
  connectTimeoutMs: 2_000,
});

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const API_KEY_PATTERN = /^psk_[0-9A-Za-z]{32,}$/;
/** A DNS host name (RFC 1123 labels), such as localhost or gateway.internal. */
const HOST_NAME_PATTERN = /^(?=.{1,253}$)[0-9A-Za-z](?:[0-9A-Za-z-]{0,61}[0-9A-Za-z])?(?:\.[0-9A-Za-z](?:[0-9A-Za-z-]{0,61}[0-9A-Za-z])?)*$/;

function present(env: Env, name: EnvironmentVariable): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: EnvironmentVariable, fallback: number, min: number, max: number): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`, raw);
  }
  return value;
}

function host(env: Env, name: EnvironmentVariable, fallback: string): string {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  if (isIP(raw) === 0 && !HOST_NAME_PATTERN.test(raw)) {
    throw new ConfigError(name, 'an IP address or a host name such as 0.0.0.0', raw);
  }
  return raw;
}

const TRUE_WORDS = ['true', 'yes', 'on', '1'];
const FALSE_WORDS = ['false', 'no', 'off', '0'];

function boolean(env: Env, name: EnvironmentVariable, fallback: boolean): boolean {
  const raw = present(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (TRUE_WORDS.includes(raw)) return true;
  if (FALSE_WORDS.includes(raw)) return false;
  throw new ConfigError(name, `${TRUE_WORDS.join('/')} or ${FALSE_WORDS.join('/')}`, raw);
}

const PROXIES_EXPECTED = `${TRUE_WORDS.join('/')}, ${FALSE_WORDS.join('/')}, or comma-separated proxy addresses and CIDR ranges such as 127.0.0.1,10.0.0.0/8`;

/** A Boolean, or the proxies whose X-Forwarded-For alone is believed: addresses and CIDR ranges. */
function trustedProxies(env: Env, name: EnvironmentVariable): boolean | BlockList {
  const raw = present(env, name);
  if (raw === undefined) return false;
  if (TRUE_WORDS.includes(raw.toLowerCase())) return true;
  if (FALSE_WORDS.includes(raw.toLowerCase())) return false;
  const proxies = new BlockList();
  for (const entry of raw.split(',').map((text) => text.trim())) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = family === 4 ? 32 : 128;
    if (family === 0 || rest.length > 0 || (prefix !== undefined && (!/^\d+$/.test(prefix) || Number(prefix) > bits))) {
      throw new ConfigError(name, PROXIES_EXPECTED, entry);
    }
    const type = family === 4 ? 'ipv4' : 'ipv6';
    if (prefix === undefined) proxies.addAddress(address, type);
    else proxies.addSubnet(address, Number(prefix), type);
  }
  return proxies;
}

function url(env: Env, name: EnvironmentVariable, protocols: string[]): string | undefined {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError(name, urlExpected(protocols), raw);
  }
  if (!protocols.includes(protocol)) {
    throw new ConfigError(name, urlExpected(protocols), raw);
  }
  return raw;
}

/** ['postgres:', 'postgresql:'] → "a postgres:// or postgresql:// URL". */
function urlExpected(protocols: string[]): string {
  return `a ${protocols.map((protocol) => `${protocol}//`).join(' or ')} URL`;
}

const NODES_EXPECTED = 'comma-separated host:port (or redis[s]://[user:password@]host:port) entries';

/**
 * A list of Redis nodes. Entries may be URLs, so that TLS and credentials are written as in
 * REDIS_URL; every URL entry must then carry the same ones, as all nodes of one deployment do.
 */
function redisNodes(env: Env, name: EnvironmentVariable): ({ nodes: RedisNode[] } & RedisNodeOptions) | undefined {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  const entries = raw.split(',').map((part) => part.trim());
  const urls = entries.filter((entry) => entry.includes('://'));
  const nodes = entries.map((entry): RedisNode => {
    let parsed: URL;
    try {
      parsed = new URL(entry.includes('://') ? entry : `redis://${entry}`);
    } catch {
      throw new ConfigError(name, NODES_EXPECTED, entry);
    }
    const port = Number(parsed.port);
    const addressOnly = parsed.pathname === '' || parsed.pathname === '/';
    if (!['redis:', 'rediss:'].includes(parsed.protocol) || !parsed.hostname || !addressOnly || port < 1 || port > 65535) {
      throw new ConfigError(name, NODES_EXPECTED, entry);
    }
    return { host: parsed.hostname.replace(/^\[|\]$/g, ''), port };
  });
  const options = urls.map((entry) => {
    const { protocol, username, password } = new URL(entry);
    return { tls: protocol === 'rediss:', username: decodeURIComponent(username) || undefined, password: decodeURIComponent(password) || undefined };
  });
  const first = options[0] ?? { tls: false, username: undefined, password: undefined };
  if (options.some((other) => JSON.stringify(other) !== JSON.stringify(first))) {
    throw new ConfigError(name, 'the same scheme and credentials in every URL entry', '<hidden>');
  }
  return { nodes, ...first };
}

/** At most one of REDIS_URL, REDIS_CLUSTER_NODES and REDIS_SENTINELS (+ REDIS_SENTINEL_NAME). */
function redisTopology(env: Env): RedisTopology | undefined {
  const single = url(env, 'REDIS_URL', ['redis:', 'rediss:']);
  const cluster = redisNodes(env, 'REDIS_CLUSTER_NODES');
  const sentinels = redisNodes(env, 'REDIS_SENTINELS');
  const name = present(env, 'REDIS_SENTINEL_NAME');
  const given = [single && 'REDIS_URL', cluster && 'REDIS_CLUSTER_NODES', sentinels && 'REDIS_SENTINELS'].filter(Boolean);
  if (given.length > 1) {
    throw new ConfigError(given[1] as string, `to be unset when ${given[0] as string} is set (one Redis topology)`, '<set>');
  }
  if (name !== undefined && !sentinels) throw new ConfigError('REDIS_SENTINELS', 'sentinel addresses when REDIS_SENTINEL_NAME is set', '');
  if (single) return { kind: 'single', url: single };
  if (cluster) return { kind: 'cluster', ...cluster };
  if (sentinels) {
    if (name === undefined) throw new ConfigError('REDIS_SENTINEL_NAME', 'the name of the master the sentinels watch', '');
    const { nodes, ...options } = sentinels;
    return { kind: 'sentinel', sentinels: nodes, name, ...options };
  }
  return undefined;
}

/** Braces would move the `{identity}` hash tag, and with it a script's keys across cluster slots. */
function keyPrefix(env: Env, name: EnvironmentVariable, fallback: string): string {
  const raw = present(env, name) ?? fallback;
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(raw)) {
    throw new ConfigError(name, '1 to 64 letters, digits, or _ . : -', raw);
  }
  return raw;
}

function date(env: Env, name: EnvironmentVariable, fallback: string): Date {
  const raw = present(env, name) ?? fallback;
  const value = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(value.getTime())) {
    throw new ConfigError(name, 'an ISO 8601 date-time such as 2027-06-30T00:00:00Z', raw);
  }
  return value;
}

function origins(env: Env, name: EnvironmentVariable): string[] {
  const raw = present(env, name);
  if (raw === undefined) return [];
  return raw.split(',').map((entry) => {
    const origin = entry.trim();
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      parsed = undefined;
    }
    if (!parsed || parsed.origin !== origin) {
      throw new ConfigError(name, 'comma-separated origins such as https://app.example.com', entry);
    }
    return origin;
  });
}

const MANIFEST_EXPECTED = 'a persisted-documents manifest: a JSON object of "sha256:<hex>": "<document>"';
/** GraphQL Code Generator 6 writes "sha256:<hex>" keys (the GraphQL-over-HTTP draft's document id); earlier versions bare hex. */
const MANIFEST_KEY = /^(?:sha256:)?([0-9a-f]{64})$/;

/**
 * The manifest GraphQL Code Generator's client preset writes with `persistedDocuments: true`.
 * Each key must be the sha256 of its document's text: that is how clients name the document.
 */
function manifest(env: Env, name: EnvironmentVariable): TrustedDocumentsManifest | undefined {
  const file = present(env, name);
  if (file === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? 'not JSON';
    throw new ConfigError(name, `a readable file holding ${MANIFEST_EXPECTED} (${reason})`, file);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed) || Object.keys(parsed).length === 0) {
    throw new ConfigError(name, `${MANIFEST_EXPECTED}, with at least one document`, file);
  }
  const documents = new Map<string, string>();
  for (const [key, document] of Object.entries(parsed)) {
    const hash = MANIFEST_KEY.exec(key)?.[1];
    if (hash === undefined || typeof document !== 'string') throw new ConfigError(name, MANIFEST_EXPECTED, `${file}: ${key}`);
    if (createHash('sha256').update(document).digest('hex') !== hash) {
      throw new ConfigError(name, 'every key to be the sha256 of its document', `${file}: ${key}`);
    }
    documents.set(hash, document);
  }
  return { file, documents };
}

/**
 * Behind a transaction-mode pooler a session lasts one transaction, so LISTEN and the migrations'
 * advisory lock need a direct connection: it is required rather than guessed, since LISTEN through
 * the pooler would go quiet without an error.
 */
function poolMode(env: Env, databaseUrl: string | undefined): Pick<Config, 'databasePoolMode' | 'databaseDirectUrl'> {
  const raw = present(env, 'DATABASE_POOL_MODE')?.toLowerCase() ?? 'session';
  const mode = DATABASE_POOL_MODES.find((option) => option === raw);
  if (mode === undefined) throw new ConfigError('DATABASE_POOL_MODE', `${DATABASE_POOL_MODES.join(' or ')}`, raw);
  const direct = url(env, 'DATABASE_DIRECT_URL', ['postgres:', 'postgresql:']);
  if (mode === 'transaction' && databaseUrl === undefined) {
    throw new ConfigError('DATABASE_URL', "the pooler's URL when DATABASE_POOL_MODE is transaction", '');
  }
  if (direct !== undefined && databaseUrl === undefined) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'to be unset without DATABASE_URL (the embedded database needs none)', '<set>');
  }
  if (mode === 'transaction' && direct === undefined) {
    throw new ConfigError('DATABASE_DIRECT_URL', 'a postgres:// URL straight to PostgreSQL (for LISTEN and migrations) when DATABASE_POOL_MODE is transaction', '');
  }
  return { databasePoolMode: mode, databaseDirectUrl: direct };
}

/**
 * DATABASE_READ_URLS: comma-separated postgres:// URLs of streaming replicas of DATABASE_URL. The
 * embedded database has none, so they need DATABASE_URL; a URL is named when it does not parse,
 * never echoed when it does (it may hold a password).
 */
function readUrls(env: Env, databaseUrl: string | undefined): string[] {
  const raw = present(env, 'DATABASE_READ_URLS');
  if (raw === undefined) return [];
  if (databaseUrl === undefined) {
    throw new ConfigError('DATABASE_READ_URLS', 'to be unset without DATABASE_URL (the embedded database has no replicas)', '<set>');
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  return entries.map((entry, index) => {
    if (entry === '') throw new ConfigError('DATABASE_READ_URLS', 'comma-separated postgres:// URLs, none empty', raw.includes('@') ? '<hidden>' : raw);
    let parsed: URL;
    try {
      parsed = new URL(entry);
    } catch {
      throw new ConfigError('DATABASE_READ_URLS', `a postgres:// or postgresql:// URL as entry ${index + 1}`, entry);
    }
    if (parsed.protocol !== 'postgres:' && parsed.protocol !== 'postgresql:') {
      throw new ConfigError('DATABASE_READ_URLS', `a postgres:// or postgresql:// URL as entry ${index + 1}`, `${parsed.protocol}//…`);
    }
    if (entries.indexOf(entry) !== index) throw new ConfigError('DATABASE_READ_URLS', `no URL twice (entry ${index + 1} repeats one)`, '<hidden>');
    return entry;
  });
}

function trustedOnly(env: Env, name: EnvironmentVariable, manifestFile: string | undefined): TrustedDocumentsOnly {
  const raw = present(env, name)?.toLowerCase() ?? 'off';
  const value = TRUSTED_DOCUMENTS_ONLY.find((option) => option === raw);
  if (value === undefined) throw new ConfigError(name, TRUSTED_DOCUMENTS_ONLY.join(', ') + ' or unset', raw);
  if (value !== 'off' && manifestFile === undefined) {
    throw new ConfigError('TRUSTED_DOCUMENTS', `a manifest file when ${name} is ${value}`, '');
  }
  return value;
}

/**
 * Both explorers read the schema by introspection, and production serves none (docs/contract.md
 * §8): there an explorer asked for is a contradiction to name, not a setting to ignore.
 */
function explorer(env: Env, name: EnvironmentVariable, production: boolean, introspection: boolean): Explorer {
  const raw = present(env, name)?.toLowerCase();
  if (raw === undefined) return production || !introspection ? 'off' : 'sandbox';
  const value = EXPLORERS.find((option) => option === raw);
  if (value === undefined) throw new ConfigError(name, `${EXPLORERS.join(', ')} or unset`, raw);
  if (value !== 'off' && production) throw new ConfigError(name, 'off or unset when NODE_ENV is production', raw);
  if (value !== 'off' && !introspection) {
    throw new ConfigError(name, 'off or unset while GRAPHQL_INTROSPECTION is off (an explorer reads the schema by introspection)', raw);
  }
  return value;
}

export function loadConfig(env: Env = process.env): Config {
  const production = present(env, 'NODE_ENV') === 'production';
  const adminApiKey = present(env, 'ADMIN_API_KEY');
  if (adminApiKey !== undefined && !API_KEY_PATTERN.test(adminApiKey)) {
    throw new ConfigError('ADMIN_API_KEY', '"psk_" followed by at least 32 letters or digits', '<hidden>');
  }
  const logLevel = present(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `one of ${LOG_LEVELS.join(', ')}`, logLevel);
  }
  const trustedDocuments = manifest(env, 'TRUSTED_DOCUMENTS');
  const databaseUrl = url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']);
  const introspection = boolean(env, 'GRAPHQL_INTROSPECTION', !production);
  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    host: host(env, 'HOST', '127.0.0.1'),
    databaseUrl,
    pgliteDataDir: present(env, 'PGLITE_DATA_DIR') ?? '.data/pglite',
    databasePoolSize: integer(env, 'DATABASE_POOL_SIZE', DATABASE_DEFAULTS.poolSize, 1, 1_000),
    databaseReservePercent: integer(env, 'DATABASE_RESERVE_PERCENT', 20, 0, 90),
    ...poolMode(env, databaseUrl),
    databaseReadUrls: readUrls(env, databaseUrl),
    databaseReadMaxLagMs: integer(env, 'DATABASE_READ_MAX_LAG_MS', 1_000, 10, 3_600_000),
    databaseStatementTimeoutMs: integer(env, 'DATABASE_STATEMENT_TIMEOUT_MS', DATABASE_DEFAULTS.statementTimeoutMs, 100, 3_600_000),
    databaseConnectTimeoutMs: integer(env, 'DATABASE_CONNECT_TIMEOUT_MS', DATABASE_DEFAULTS.connectTimeoutMs, 100, 600_000),
    redis: redisTopology(env),
    redisKeyPrefix: keyPrefix(env, 'REDIS_KEY_PREFIX', 'petstore'),
    adminApiKey,
    banThreshold: integer(env, 'BAN_THRESHOLD', 10, 0, 1_000_000),
    banSeconds: integer(env, 'BAN_SECONDS', 900, 1, 31_536_000),
    banPauseMs: integer(env, 'BAN_PAUSE_MS', 1000, 0, 60_000),
    // Embedded, the database's own work runs on the event loop: its delay says nothing of a crowd.
    shedLoopDelayMs: integer(env, 'SHED_LOOP_DELAY_MS', databaseUrl === undefined ? 0 : 50, 0, 60_000),
    // Half a core of a PostgreSQL server's: a crowd of unpaid identities, each within its own
    // limits, cannot keep the cores busy that paying clients' statements need. Embedded, the
    // database shares the gateway's one process, whose loop the shedding above does not watch.
    unpaidDatabaseMsPerSecond: integer(env, 'UNPAID_DATABASE_MS_PER_SECOND', databaseUrl === undefined ? 0 : 500, 0, 1_000_000),
    petsSunset: date(env, 'PETS_SUNSET', '2027-06-30T00:00:00Z'),
    responseCache: boolean(env, 'RESPONSE_CACHE', true),
    responseCacheMaxAgeSeconds: integer(env, 'RESPONSE_CACHE_MAX_AGE_SECONDS', 60, 1, 86_400),
    responseCacheMaxBytes: integer(env, 'RESPONSE_CACHE_MAX_BYTES', 32 * 1024 * 1024, 1024 * 1024, 16 * 1024 * 1024 * 1024),
    trustProxy: trustedProxies(env, 'TRUST_PROXY'),
    maxQueryCost: integer(env, 'MAX_QUERY_COST', 1000, 1, 1_000_000),
    maxSockets: present(env, 'MAX_SOCKETS') === undefined ? undefined : integer(env, 'MAX_SOCKETS', 0, 1, 1_000_000),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    introspection,
    explorer: explorer(env, 'GRAPHQL_EXPLORER', production, introspection),
    logLevel,
    logFlushMs: integer(env, 'LOG_FLUSH_MS', 1_000, 10, 60_000),
    production,
    trustedDocuments,
    trustedDocumentsOnly: trustedOnly(env, 'TRUSTED_DOCUMENTS_ONLY', trustedDocuments?.file),
  };
}

/**
 * Variables set in `env` that look like a misspelling of one the gateway reads and that is unset
 * (DATABSE_URL for DATABASE_URL): a typo would otherwise start the gateway on a default without a
 * word. One line each, naming the variable probably meant.
 */
export function misspelledVariables(env: Env): string[] {
  const known = new Set<string>(ENVIRONMENT_VARIABLES);
  return Object.keys(env)
    .filter((name) => !known.has(name) && env[name] !== undefined)
    .flatMap((name) => {
      const meant = ENVIRONMENT_VARIABLES.find((variable) => env[variable] === undefined && looksLike(name.toUpperCase(), variable));
      return meant ? [`${name} is not a setting of the gateway and ${meant} is unset: did you mean ${meant}?`] : [];
    });
}

/**
 * At most one edit apart (a letter added, dropped, changed, or two swapped), two for names of
 * ten letters or more: close enough to be a typo, far enough that HOME is not taken for HOST.
 */
function looksLike(name: string, variable: string): boolean {
  const allowed = variable.length >= 10 ? 2 : 1;
  return Math.abs(name.length - variable.length) <= allowed && editDistance(name, variable) <= allowed;
}

/** Damerau-Levenshtein distance (optimal string alignment): a swap of neighbours counts as one edit. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i += 1) {
    for (let j = 1; j <= b.length; j += 1) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + change);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
    }
  }
  return rows[a.length][b.length];
}
