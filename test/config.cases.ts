import { resolve } from 'node:path';
import { editDistance, loadConfig, misspelledVariables } from '../src/config';
import { databaseLocation } from '../src/db/database-location';
import { redisAddress } from '../src/limits/redis-client';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      host: '127.0.0.1',
      databaseUrl: undefined,
      pgliteDataDir: '.data/pglite',
      databasePoolSize: 10,
      databaseStatementTimeoutMs: 5_000,
      databaseConnectTimeoutMs: 2_000,
      databasePoolMode: 'session',
      databaseDirectUrl: undefined,
      redis: undefined,
      redisKeyPrefix: 'petstore',
      adminApiKey: undefined,
      banThreshold: 10,
      banSeconds: 900,
      trustProxy: false,
      maxQueryCost: 1000,
      corsOrigins: [],
      introspection: true,
      explorer: 'sandbox',
      logLevel: 'info',
    });
    expect(config.petsSunset.toISOString()).toBe('2027-06-30T00:00:00.000Z');
  });

  it('guards a PostgreSQL server by default (loop-delay shedding, the unpaid classes’ database time), not the embedded database', () => {
    const server = loadConfig({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/petstore' });
    expect([server.shedLoopDelayMs, server.unpaidDatabaseMsPerSecond]).toEqual([50, 500]);
    expect([loadConfig({}).shedLoopDelayMs, loadConfig({}).unpaidDatabaseMsPerSecond]).toEqual([0, 0]);
  });

  it('turns introspection off in production unless asked for', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).introspection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe(true);
  });

  it('shows Apollo Sandbox by default, and no explorer in production or without introspection', () => {
    expect(loadConfig({ GRAPHQL_EXPLORER: 'GraphiQL' }).explorer).toBe('graphiql');
    expect(loadConfig({ GRAPHQL_EXPLORER: 'off' }).explorer).toBe('off');
    expect(loadConfig({ NODE_ENV: 'production' }).explorer).toBe('off');
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).explorer).toBe('off');
    expect(loadConfig({ GRAPHQL_INTROSPECTION: 'false' }).explorer).toBe('off');
  });

  it.each([
    [{ GRAPHQL_EXPLORER: 'playground' }, /^GRAPHQL_EXPLORER: expected sandbox, graphiql, off or unset, got "playground"$/],
    [{ GRAPHQL_EXPLORER: 'graphiql', NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }, /^GRAPHQL_EXPLORER: expected off or unset when NODE_ENV is production, got "graphiql"$/],
    [{ GRAPHQL_EXPLORER: 'sandbox', GRAPHQL_INTROSPECTION: 'false' }, /^GRAPHQL_EXPLORER: expected off or unset while GRAPHQL_INTROSPECTION is off/],
  ])('stops on an explorer it cannot serve: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      HOST: '0.0.0.0',
      DATABASE_URL: 'postgres://u@db:5432/shop',
      DATABASE_POOL_SIZE: '25',
      DATABASE_STATEMENT_TIMEOUT_MS: '8000',
      DATABASE_CONNECT_TIMEOUT_MS: '3000',
      REDIS_URL: 'redis://cache:6379',
      REDIS_KEY_PREFIX: 'shop-eu:prod',
      ADMIN_API_KEY: 'psk_' + 'a'.repeat(40),
      BAN_THRESHOLD: '3',
      BAN_SECONDS: '60',
      PETS_SUNSET: '2030-01-01T00:00:00Z',
      TRUST_PROXY: 'true',
      MAX_QUERY_COST: '500',
      CORS_ORIGINS: 'https://a.example, https://b.example:8443',
      LOG_LEVEL: 'debug',
    });
    expect(config).toMatchObject({
      port: 8080,
      host: '0.0.0.0',
      databaseUrl: 'postgres://u@db:5432/shop',
      databasePoolSize: 25,
      databaseStatementTimeoutMs: 8_000,
      databaseConnectTimeoutMs: 3_000,
      redis: { kind: 'single', url: 'redis://cache:6379' },
      redisKeyPrefix: 'shop-eu:prod',
      banThreshold: 3,
      banSeconds: 60,
      trustProxy: true,
      maxQueryCost: 500,
      corsOrigins: ['https://a.example', 'https://b.example:8443'],
      logLevel: 'debug',
    });
  });

  it('reads TRUST_PROXY as a list of proxy addresses and ranges, IPv4 and IPv6', () => {
    const { trustProxy } = loadConfig({ TRUST_PROXY: '127.0.0.1, 10.1.0.0/16, fd00::/8' });
    if (typeof trustProxy === 'boolean') throw new Error(`expected a list of proxies, got ${trustProxy}`);
    expect(['127.0.0.1', '10.1.200.3'].map((address) => trustProxy.check(address, 'ipv4'))).toEqual([true, true]);
    expect(['127.0.0.2', '10.2.0.1'].map((address) => trustProxy.check(address, 'ipv4'))).toEqual([false, false]);
    expect(['fd12::1', '::1'].map((address) => trustProxy.check(address, 'ipv6'))).toEqual([true, false]);
    expect(loadConfig({ TRUST_PROXY: 'off' }).trustProxy).toBe(false);
  });

  it('reads a transaction-mode pooler with its direct URL', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@pgbouncer:6432/shop',
      DATABASE_POOL_MODE: 'Transaction',
      DATABASE_DIRECT_URL: 'postgresql://u@db:5432/shop',
    });
    expect(config).toMatchObject({ databasePoolMode: 'transaction', databaseDirectUrl: 'postgresql://u@db:5432/shop' });
  });

  it.each([
    [{ DATABASE_URL: 'postgres://u@pgbouncer/shop', DATABASE_POOL_MODE: 'statement' }, /^DATABASE_POOL_MODE: expected session or transaction, got "statement"$/],
    [{ DATABASE_URL: 'postgres://u@pgbouncer/shop', DATABASE_POOL_MODE: 'transaction' }, /^DATABASE_DIRECT_URL: expected a postgres:\/\/ URL straight to PostgreSQL \(for LISTEN and migrations\) when DATABASE_POOL_MODE is transaction, got ""$/],
    [{ DATABASE_POOL_MODE: 'transaction', DATABASE_DIRECT_URL: 'postgres://u@db/shop' }, /^DATABASE_URL: expected the pooler's URL when DATABASE_POOL_MODE is transaction/],
    [{ DATABASE_DIRECT_URL: 'postgres://u@db/shop' }, /^DATABASE_DIRECT_URL: expected to be unset without DATABASE_URL/],
    [{ DATABASE_URL: 'postgres://u@pgbouncer/shop', DATABASE_DIRECT_URL: 'redis://db' }, /^DATABASE_DIRECT_URL: expected a postgres:\/\/ or postgresql:\/\/ URL/],
  ])('stops on a pool mode without what it needs: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads read replicas and their lag bound', () => {
    const config = loadConfig({
      DATABASE_URL: 'postgres://u@primary:5432/shop',
      DATABASE_READ_URLS: 'postgres://u@replica-1:5432/shop, postgresql://u:secret@replica-2/shop',
      DATABASE_READ_MAX_LAG_MS: '250',
    });
    expect(config).toMatchObject({ databaseReadUrls: ['postgres://u@replica-1:5432/shop', 'postgresql://u:secret@replica-2/shop'], databaseReadMaxLagMs: 250 });
    expect(loadConfig({ DATABASE_URL: 'postgres://u@primary/shop' })).toMatchObject({ databaseReadUrls: [], databaseReadMaxLagMs: 1_000 });
  });

  it.each([
    [{ DATABASE_READ_URLS: 'postgres://u@replica/shop' }, /^DATABASE_READ_URLS: expected to be unset without DATABASE_URL \(the embedded database has no replicas\), got "<set>"$/],
    [{ DATABASE_URL: 'postgres://u@db/shop', DATABASE_READ_URLS: 'postgres://u@replica/shop,,postgres://u@other/shop' }, /^DATABASE_READ_URLS: expected comma-separated postgres:\/\/ URLs, none empty/],
    [{ DATABASE_URL: 'postgres://u@db/shop', DATABASE_READ_URLS: 'postgres://u@replica/shop, replica-2:5432' }, /^DATABASE_READ_URLS: expected a postgres:\/\/ or postgresql:\/\/ URL as entry 2, got "replica-2:/],
    [{ DATABASE_URL: 'postgres://u@db/shop', DATABASE_READ_URLS: 'mysql://u:secret@replica/shop' }, /^DATABASE_READ_URLS: expected a postgres:\/\/ or postgresql:\/\/ URL as entry 1, got "mysql:\/\/…"$/],
    [{ DATABASE_URL: 'postgres://u@db/shop', DATABASE_READ_URLS: 'postgres://u@replica/shop,postgres://u@replica/shop' }, /^DATABASE_READ_URLS: expected no URL twice \(entry 2 repeats one\)/],
    [{ DATABASE_URL: 'postgres://u@db/shop', DATABASE_READ_MAX_LAG_MS: '1s' }, /^DATABASE_READ_MAX_LAG_MS: expected an integer from 10 to 3600000, got "1s"$/],
  ])('stops on read replicas it cannot use: %p', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it('reads a Redis Cluster, taking TLS and credentials from URL entries', () => {
    expect(loadConfig({ REDIS_CLUSTER_NODES: '10.0.0.1:7000, 10.0.0.2:7001' }).redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
      ],
      tls: false,
      username: undefined,
      password: undefined,
    });
    expect(loadConfig({ REDIS_CLUSTER_NODES: 'rediss://:s%40cret@a.internal:6380,rediss://:s%40cret@b.internal:6380' }).redis).toMatchObject({
      kind: 'cluster',
      nodes: [
        { host: 'a.internal', port: 6380 },
        { host: 'b.internal', port: 6380 },
      ],
      tls: true,
      password: 's@cret',
    });
  });

  it('reads Sentinel addresses and the master name', () => {
    expect(loadConfig({ REDIS_SENTINELS: 'redis://app:pw@s1:26379,s2:26379', REDIS_SENTINEL_NAME: 'petstore' }).redis).toEqual({
      kind: 'sentinel',
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      name: 'petstore',
      tls: false,
      username: 'app',
      password: 'pw',
    });
  });

  it.each([
    [{ REDIS_URL: 'redis://a:6379', REDIS_CLUSTER_NODES: 'b:7000' }, /^REDIS_CLUSTER_NODES: expected to be unset when REDIS_URL is set/],
    [{ REDIS_CLUSTER_NODES: 'b:7000', REDIS_SENTINELS: 's:26379' }, /^REDIS_SENTINELS: expected to be unset when REDIS_CLUSTER_NODES is set/],
    [{ REDIS_SENTINELS: 's:26379' }, /^REDIS_SENTINEL_NAME: expected the name of the master/],
    [{ REDIS_SENTINEL_NAME: 'petstore' }, /^REDIS_SENTINELS: expected sentinel addresses/],
    [{ REDIS_CLUSTER_NODES: 'a:7000,b' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port .*, got "b"$/],
    [{ REDIS_CLUSTER_NODES: 'a:7000,http://b:80' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port/],
    [{ REDIS_CLUSTER_NODES: 'a:99999' }, /^REDIS_CLUSTER_NODES: expected comma-separated host:port/],
    [{ REDIS_CLUSTER_NODES: 'rediss://a:7000,redis://b:7000' }, /^REDIS_CLUSTER_NODES: expected the same scheme and credentials in every URL entry, got "<hidden>"$/],
  ])('stops on an inconsistent Redis topology (%p)', (env, message) => {
    expect(() => loadConfig(env)).toThrow(message);
  });

  it.each(['::', '::1', '10.0.0.7', 'localhost', 'gateway.internal'])('accepts HOST %p', (value) => {
    expect(loadConfig({ HOST: value }).host).toBe(value);
  });

  it.each([
    ['PORT', 'http', /^PORT: expected an integer from 0 to 65535, got "http"$/],
    ['PORT', '70000', /^PORT: expected an integer from 0 to 65535/],
    ['HOST', 'http://example.com', /^HOST: expected an IP address or a host name such as 0.0.0.0, got "http:\/\/example.com"$/],
    ['HOST', '-gateway', /^HOST: expected an IP address or a host name/],
    ['DATABASE_URL', 'mysql://x/y', /^DATABASE_URL: expected a postgres:\/\/ or postgresql:\/\/ URL/],
    ['REDIS_URL', 'not a url', /^REDIS_URL: expected a redis:\/\/ or rediss:\/\/ URL/],
    ['ADMIN_API_KEY', 'secret', /^ADMIN_API_KEY: expected "psk_" followed by at least 32 letters or digits, got "<hidden>"$/],
    ['BAN_THRESHOLD', '-1', /^BAN_THRESHOLD: expected an integer/],
    ['BAN_SECONDS', '0', /^BAN_SECONDS: expected an integer from 1/],
    ['PETS_SUNSET', 'next june', /^PETS_SUNSET: expected an ISO 8601 date-time/],
    ['TRUST_PROXY', 'maybe', /^TRUST_PROXY: expected true\/yes\/on\/1, false\/no\/off\/0, or comma-separated proxy addresses and CIDR ranges such as 127.0.0.1,10.0.0.0\/8, got "maybe"$/],
    ['TRUST_PROXY', '127.0.0.1, 10.0.0.0/33', /^TRUST_PROXY: expected .*, got "10.0.0.0\/33"$/],
    ['TRUST_PROXY', '127.0.0.1/8/1', /^TRUST_PROXY: expected .*, got "127.0.0.1\/8\/1"$/],
    ['TRUST_PROXY', 'proxy.internal', /^TRUST_PROXY: expected .*, got "proxy.internal"$/],
    ['MAX_QUERY_COST', '1.5', /^MAX_QUERY_COST: expected an integer/],
    ['CORS_ORIGINS', 'https://a.example/path', /^CORS_ORIGINS: expected comma-separated origins/],
    ['GRAPHQL_INTROSPECTION', 'sometimes', /^GRAPHQL_INTROSPECTION: expected true\/yes\/on\/1 or false\/no\/off\/0/],
    ['DATABASE_POOL_SIZE', '0', /^DATABASE_POOL_SIZE: expected an integer from 1 to 1000, got "0"$/],
    ['DATABASE_STATEMENT_TIMEOUT_MS', '5s', /^DATABASE_STATEMENT_TIMEOUT_MS: expected an integer from 100/],
    ['DATABASE_CONNECT_TIMEOUT_MS', '10', /^DATABASE_CONNECT_TIMEOUT_MS: expected an integer from 100/],
    ['REDIS_KEY_PREFIX', 'shop{eu}', /^REDIS_KEY_PREFIX: expected 1 to 64 letters, digits, or _ . : -, got "shop\{eu\}"$/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"$/],
  ])('stops on a wrong %s (%p), naming it and what it expects', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});

describe('misspelledVariables', () => {
  it('names the variable probably meant for a near miss of an unset one', () => {
    expect(misspelledVariables({ DATABSE_URL: 'postgres://db/petstore', LOGLEVEL: 'debug', redis_url: 'redis://r:6379' })).toEqual([
      'DATABSE_URL is not a setting of the gateway and DATABASE_URL is unset: did you mean DATABASE_URL?',
      'LOGLEVEL is not a setting of the gateway and LOG_LEVEL is unset: did you mean LOG_LEVEL?',
      'redis_url is not a setting of the gateway and REDIS_URL is unset: did you mean REDIS_URL?',
    ]);
  });

  it("leaves alone a machine's usual variables, and a near miss of a variable that is set", () => {
    const usual = { HOME: '/root', PWD: '/', PATH: '/bin', TERM: 'xterm', HOSTNAME: 'box', NODE_OPTIONS: '', LANG: 'C', SHELL: '/bin/sh', USER: 'root', PGPORT: '5432' };
    expect(misspelledVariables(usual)).toEqual([]);
    expect(misspelledVariables({ DATABASE_URL: 'postgres://db/petstore', DATABASE_URI: 'postgres://db/petstore' })).toEqual([]);
  });

  it('counts a swap of two neighbouring letters as one edit', () => {
    expect(editDistance('DATABSAE_URL', 'DATABASE_URL')).toBe(1);
    expect(editDistance('HOME', 'HOST')).toBe(2);
  });
});

describe('where the start-up lines say the database and Redis are', () => {
  it('never with a password', () => {
    expect(databaseLocation({ databaseUrl: 'postgres://app:secret@db.internal:6543/petstore', pgliteDataDir: '.data/pglite' })).toBe('PostgreSQL at db.internal:6543/petstore');
    expect(databaseLocation({ databaseUrl: undefined, pgliteDataDir: 'memory://' })).toBe('embedded PGlite in memory (memory://)');
    expect(databaseLocation({ databaseUrl: undefined, pgliteDataDir: '.data/pglite' })).toBe(`embedded PGlite at ${resolve('.data/pglite')}`);
    expect(redisAddress({ kind: 'single', url: 'redis://:secret@cache.internal' })).toBe('cache.internal:6379 (REDIS_URL)');
    expect(redisAddress({ kind: 'sentinel', name: 'main', sentinels: [{ host: 's1', port: 26379 }], tls: false })).toBe('master "main" through s1:26379 (REDIS_SENTINELS)');
  });
});
