import { loadConfig } from '../src/config';

describe('loadConfig', () => {
  it('gives the documented defaults', () => {
    const config = loadConfig({});
    expect(config).toMatchObject({
      port: 4000,
      databaseUrl: undefined,
      pgliteDataDir: '.data/pglite',
      redisUrl: undefined,
      adminApiKey: undefined,
      banThreshold: 10,
      banSeconds: 900,
      trustProxy: false,
      maxQueryCost: 1000,
      corsOrigins: [],
      introspection: true,
      logLevel: 'info',
    });
    expect(config.petsSunset.toISOString()).toBe('2027-06-30T00:00:00.000Z');
  });

  it('turns introspection off in production unless asked for', () => {
    expect(loadConfig({ NODE_ENV: 'production' }).introspection).toBe(false);
    expect(loadConfig({ NODE_ENV: 'production', GRAPHQL_INTROSPECTION: 'true' }).introspection).toBe(true);
  });

  it('reads every variable', () => {
    const config = loadConfig({
      PORT: '8080',
      DATABASE_URL: 'postgres://u@db:5432/shop',
      REDIS_URL: 'redis://cache:6379',
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
      databaseUrl: 'postgres://u@db:5432/shop',
      redisUrl: 'redis://cache:6379',
      banThreshold: 3,
      banSeconds: 60,
      trustProxy: true,
      maxQueryCost: 500,
      corsOrigins: ['https://a.example', 'https://b.example:8443'],
      logLevel: 'debug',
    });
  });

  it.each([
    ['PORT', 'http', /^PORT: expected an integer from 0 to 65535, got "http"$/],
    ['PORT', '70000', /^PORT: expected an integer from 0 to 65535/],
    ['DATABASE_URL', 'mysql://x/y', /^DATABASE_URL: expected a postgres: or postgresql:\/\/ URL/],
    ['REDIS_URL', 'not a url', /^REDIS_URL: expected a redis: or rediss:\/\/ URL/],
    ['ADMIN_API_KEY', 'secret', /^ADMIN_API_KEY: expected "psk_" followed by at least 32 letters or digits, got "<hidden>"$/],
    ['BAN_THRESHOLD', '-1', /^BAN_THRESHOLD: expected an integer/],
    ['BAN_SECONDS', '0', /^BAN_SECONDS: expected an integer from 1/],
    ['PETS_SUNSET', 'next june', /^PETS_SUNSET: expected an ISO 8601 date-time/],
    ['TRUST_PROXY', 'maybe', /^TRUST_PROXY: expected true or false/],
    ['MAX_QUERY_COST', '1.5', /^MAX_QUERY_COST: expected an integer/],
    ['CORS_ORIGINS', 'https://a.example/path', /^CORS_ORIGINS: expected comma-separated origins/],
    ['GRAPHQL_INTROSPECTION', 'sometimes', /^GRAPHQL_INTROSPECTION: expected true or false/],
    ['LOG_LEVEL', 'loud', /^LOG_LEVEL: expected one of fatal, error, warn, info, debug, trace, silent, got "loud"$/],
  ])('stops on a wrong %s (%p), naming it and what it expects', (name, value, message) => {
    expect(() => loadConfig({ [name]: value })).toThrow(message);
  });
});
