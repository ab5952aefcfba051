/**
 * The gateway's settings, read once from the environment (README "Configuration").
 * A wrong value stops start-up with a message naming the variable and what it expects.
 */
export interface Config {
  port: number;
  /** Unset: an embedded PostgreSQL (PGlite) is started in-process. */
  databaseUrl?: string;
  pgliteDataDir: string;
  /** Unset: limiter state lives in this process. */
  redisUrl?: string;
  /** Always accepted, with the admin role. Generated in embedded mode when unset. */
  adminApiKey?: string;
  banThreshold: number;
  banSeconds: number;
  petsSunset: Date;
  trustProxy: boolean;
  maxQueryCost: number;
  corsOrigins: string[];
  introspection: boolean;
  logLevel: string;
  production: boolean;
}

export class ConfigError extends Error {
  constructor(variable: string, expected: string, got: string) {
    super(`${variable}: expected ${expected}, got ${JSON.stringify(got)}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const API_KEY_PATTERN = /^psk_[0-9A-Za-z]{32,}$/;

function present(env: Env, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function integer(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = present(env, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || value < min || value > max) {
    throw new ConfigError(name, `an integer from ${min} to ${max}`, raw);
  }
  return value;
}

function boolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = present(env, name)?.toLowerCase();
  if (raw === undefined) return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(name, 'true or false', raw);
}

function url(env: Env, name: string, protocols: string[]): string | undefined {
  const raw = present(env, name);
  if (raw === undefined) return undefined;
  let protocol: string;
  try {
    protocol = new URL(raw).protocol;
  } catch {
    throw new ConfigError(name, `a ${protocols.join(' or ')}// URL`, raw);
  }
  if (!protocols.includes(protocol)) {
    throw new ConfigError(name, `a ${protocols.join(' or ')}// URL`, raw);
  }
  return raw;
}

function date(env: Env, name: string, fallback: string): Date {
  const raw = present(env, name) ?? fallback;
  const value = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}T/.test(raw) || Number.isNaN(value.getTime())) {
    throw new ConfigError(name, 'an ISO 8601 date-time such as 2027-06-30T00:00:00Z', raw);
  }
  return value;
}

function origins(env: Env, name: string): string[] {
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

export function loadConfig(env: Env = process.env): Config {
  const production = env.NODE_ENV === 'production';
  const adminApiKey = present(env, 'ADMIN_API_KEY');
  if (adminApiKey !== undefined && !API_KEY_PATTERN.test(adminApiKey)) {
    throw new ConfigError('ADMIN_API_KEY', '"psk_" followed by at least 32 letters or digits', '<hidden>');
  }
  const logLevel = present(env, 'LOG_LEVEL') ?? 'info';
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError('LOG_LEVEL', `one of ${LOG_LEVELS.join(', ')}`, logLevel);
  }
  return {
    port: integer(env, 'PORT', 4000, 0, 65535),
    databaseUrl: url(env, 'DATABASE_URL', ['postgres:', 'postgresql:']),
    pgliteDataDir: present(env, 'PGLITE_DATA_DIR') ?? '.data/pglite',
    redisUrl: url(env, 'REDIS_URL', ['redis:', 'rediss:']),
    adminApiKey,
    banThreshold: integer(env, 'BAN_THRESHOLD', 10, 0, 1_000_000),
    banSeconds: integer(env, 'BAN_SECONDS', 900, 1, 31_536_000),
    petsSunset: date(env, 'PETS_SUNSET', '2027-06-30T00:00:00Z'),
    trustProxy: boolean(env, 'TRUST_PROXY', false),
    maxQueryCost: integer(env, 'MAX_QUERY_COST', 1000, 1, 1_000_000),
    corsOrigins: origins(env, 'CORS_ORIGINS'),
    introspection: boolean(env, 'GRAPHQL_INTROSPECTION', !production),
    logLevel,
    production,
  };
}
