import request from 'supertest';
import { parseCreateCommand, USAGE, wantsHelp } from '../../src/cli/apikey';
import { ApiKeyService, KEY_CACHE_TTL_MS, keyCache } from '../../src/auth/api-key.service';
import { generateApiKey } from '../../src/auth/key-secret';
import { Statements } from '../../src/sql/statements';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet } from '../helpers/builders';
import { codes, gql } from '../helpers/gql';
import { countStatements } from '../helpers/statements';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const CREATE = `mutation($input: NewApiKey!) {
  createApiKey(input: $input) { key apiKey { id name plan role requestsPerMinute requestsPerDay createdAt revokedAt } }
}`;

describe('createApiKey', () => {
  it('issues a psk_ key, shown once and stored only as its SHA-256', async () => {
    const result = await gql(t.url, CREATE, { input: { name: ' Mobile app ', plan: 'PRO' } }, { key: t.adminKey });
    expect(result.errors).toBeUndefined();
    const { key, apiKey } = result.data!.createApiKey;
    expect(key).toMatch(/^psk_[0-9A-Za-z]{32,}$/);
    expect(apiKey).toMatchObject({ name: 'Mobile app', plan: 'PRO', role: 'CLIENT', requestsPerMinute: 300, requestsPerDay: 10000, revokedAt: null });
    const rows = await t.db.dataSource.query('SELECT * FROM api_keys WHERE id = $1', [apiKey.id]);
    expect(JSON.stringify(rows)).not.toContain(key);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);
    const listed = await gql(t.url, '{ apiKeys(first: 100) { nodes { id name } } }', undefined, { key: t.adminKey });
    expect(JSON.stringify(listed.body)).not.toContain(key);
  });

  it('takes custom figures on ENTERPRISE only, and needs both', async () => {
    const enterprise = await gql(t.url, CREATE, { input: { name: 'Big', plan: 'ENTERPRISE', requestsPerMinute: 5000, requestsPerDay: 70000 } }, { key: t.adminKey });
    expect(enterprise.data?.createApiKey.apiKey).toMatchObject({ plan: 'ENTERPRISE', requestsPerMinute: 5000, requestsPerDay: 70000 });
    const equal = await gql(t.url, CREATE, { input: { name: 'Even', plan: 'ENTERPRISE', requestsPerMinute: 100, requestsPerDay: 100 } }, { key: t.adminKey });
    expect(equal.errors).toBeUndefined();
    const half = await gql(t.url, CREATE, { input: { name: 'Half', plan: 'ENTERPRISE', requestsPerMinute: 5000 } }, { key: t.adminKey });
    expect(codes(half)).toEqual(['BAD_USER_INPUT']);
    const free = await gql(t.url, CREATE, { input: { name: 'Free', plan: 'FREE', requestsPerDay: 5 } }, { key: t.adminKey });
    expect(codes(free)).toEqual(['BAD_USER_INPUT']);
    const zero = await gql(t.url, CREATE, { input: { name: 'Zero', plan: 'ENTERPRISE', requestsPerMinute: 0, requestsPerDay: 5 } }, { key: t.adminKey });
    expect(zero.errors?.[0].message).toBe('requestsPerMinute must be at least 1');
  });

  it('refuses an ENTERPRISE day quota below its minute quota', async () => {
    const result = await gql(t.url, CREATE, { input: { name: 'Odd', plan: 'ENTERPRISE', requestsPerMinute: 100, requestsPerDay: 10 } }, { key: t.adminKey });
    expect(result.status).toBe(200);
    expect(result.data).toEqual({ createApiKey: null });
    expect(result.errors?.[0]).toMatchObject({
      message: 'requestsPerDay must be at least requestsPerMinute: expected at least 100, got 10',
      extensions: { code: 'BAD_USER_INPUT', status: 400 },
    });
  });

  it('issues admin keys that can manage keys', async () => {
    const admin = await createApiKey(t, { role: 'ADMIN', plan: 'BUSINESS' });
    const listed = await gql(t.url, '{ apiKeys { totalCount nodes { role } } }', undefined, { key: admin.key });
    expect(listed.errors).toBeUndefined();
    expect(listed.data?.apiKeys.totalCount).toBeGreaterThan(1);
  });
});

describe('roles', () => {
  let client: string;
  beforeAll(async () => {
    client = (await createApiKey(t)).key;
  });

  it('lets anonymous callers read the catalogue', async () => {
    const result = await gql(t.url, '{ pets { totalCount } categories { totalCount } }');
    expect(result.status).toBe(200);
    expect(result.errors).toBeUndefined();
  });

  it('refuses catalogue writes without a key: UNAUTHENTICATED (401) as a field error', async () => {
    const result = await gql(t.url, 'mutation { createCategory(input: { name: "X" }) { id } }');
    expect(result.status).toBe(200);
    expect(result.errors?.[0]).toMatchObject({ path: ['createCategory'], extensions: { code: 'UNAUTHENTICATED', status: 401 } });
  });

  it('refuses catalogue writes and key management to a client key: FORBIDDEN (403)', async () => {
    const categoryId = await createCategory(t);
    const petId = await createPet(t, categoryId);
    const operations = [
      'mutation { createCategory(input: { name: "X" }) { id } }',
      `mutation { updateCategory(id: "${categoryId}", input: { name: "X" }) { id } }`,
      `mutation { deleteCategory(id: "${categoryId}") }`,
      `mutation { createPet(input: { name: "X", categoryId: "${categoryId}" }) { id } }`,
      `mutation { updatePet(id: "${petId}", input: { name: "X" }) { id } }`,
      `mutation { deletePet(id: "${petId}") }`,
      'mutation { createApiKey(input: { name: "X", plan: FREE }) { key } }',
      `mutation { revokeApiKey(id: "1") { id } }`,
      '{ apiKeys { totalCount } }',
    ];
    for (const operation of operations) {
      const result = await gql(t.url, operation, undefined, { key: client });
      expect(result.status).toBe(200);
      expect(result.errors?.[0].extensions).toEqual({ code: 'FORBIDDEN', status: 403 });
    }
    expect((await gql(t.url, `{ pet(id: "${petId}") { name } }`)).data?.pet.name).toBe('Rex');
  });

  it('refuses an unknown key with 401 INVALID_API_KEY, never as anonymous', async () => {
    for (const key of [generateApiKey(), 'not-a-key', '']) {
      const result = await gql(t.url, '{ pets { totalCount } }', undefined, { headers: { 'X-API-Key': key } });
      expect(result.status).toBe(401);
      expect(result.body).toEqual({ errors: [{ message: 'The X-API-Key header names no valid key', extensions: { code: 'INVALID_API_KEY', status: 401 } }] });
    }
  });

  it('refuses a revoked key on every surface', async () => {
    const { key, id } = await createApiKey(t);
    expect((await gql(t.url, '{ pets { totalCount } }', undefined, { key })).status).toBe(200);
    const revoked = await gql(t.url, `mutation { revokeApiKey(id: "${id}") { id revokedAt } }`, undefined, { key: t.adminKey });
    expect(revoked.data?.revokeApiKey.revokedAt).toEqual(expect.any(String));
    const after = await gql(t.url, '{ pets { totalCount } }', undefined, { key });
    expect(after.status).toBe(401);
    expect(codes(after)).toEqual(['INVALID_API_KEY']);
    const rest = await request(t.url).get('/no-such-path').set('X-API-Key', key);
    expect(rest.status).toBe(401);
    expect(rest.body).toEqual({ code: 'INVALID_API_KEY', message: 'The X-API-Key header names no valid key', status: 401 });
  });

  it('gives NOT_FOUND when revoking an unknown key, and refuses to revoke the ADMIN_API_KEY', async () => {
    expect(codes(await gql(t.url, 'mutation { revokeApiKey(id: "99999") { id } }', undefined, { key: t.adminKey }))).toEqual(['NOT_FOUND']);
    const [{ id }] = await t.db.dataSource.query('SELECT id FROM api_keys WHERE from_environment');
    const result = await gql(t.url, `mutation { revokeApiKey(id: "${id}") { id } }`, undefined, { key: t.adminKey });
    expect(codes(result)).toEqual(['FORBIDDEN']);
  });
});

describe('ADMIN_API_KEY', () => {
  it('acts as an ENTERPRISE admin key with 10,000/min and 1,000,000/day', async () => {
    const result = await gql(t.url, '{ apiKeys(first: 100) { nodes { name plan role requestsPerMinute requestsPerDay } } }', undefined, { key: t.adminKey });
    expect(result.data?.apiKeys.nodes).toContainEqual({ name: 'ADMIN_API_KEY', plan: 'ENTERPRISE', role: 'ADMIN', requestsPerMinute: 10000, requestsPerDay: 1000000 });
  });

  it('stops working when the configuration drops it, and a new one takes its row', async () => {
    const service = t.app.services.apiKeys;
    await service.syncEnvironmentKey(undefined);
    expect((await gql(t.url, '{ pets { totalCount } }', undefined, { key: t.adminKey })).status).toBe(401);
    const replacement = generateApiKey();
    await service.syncEnvironmentKey(replacement);
    expect((await gql(t.url, '{ apiKeys { totalCount } }', undefined, { key: replacement })).errors).toBeUndefined();
    await service.syncEnvironmentKey(t.adminKey);
    const rows = await t.db.dataSource.query('SELECT count(*)::int AS n FROM api_keys WHERE from_environment');
    expect(rows[0].n).toBe(1);
  });
});

describe('npm run apikey -- create', () => {
  it('parses the command into the mutation’s input, and the key it issues works over HTTP', async () => {
    const input = await parseCreateCommand(['create', '--name', 'Deploy bot', '--plan', 'business', '--role', 'admin']);
    const { key } = await new ApiKeyService(new Statements(t.db.dataSource)).create(input);
    const result = await gql(t.url, '{ apiKeys { totalCount } }', undefined, { key });
    expect(result.errors).toBeUndefined();
  });

  it.each([
    [['create', '--name', 'x'], /usage/],
    [['create', '--name', 'x', '--plan', 'gold'], /--plan: expected one of FREE, PRO, BUSINESS, ENTERPRISE, got "gold"/],
    [['create', '--name', '', '--plan', 'free'], /usage/],
    [['create', '--name', 'x', '--plan', 'free', '--role', 'root'], /--role/],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', 'many'], /--per-minute: expected a whole number/],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '100', '--per-day', '10'], /--per-day must be at least --per-minute/],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '100'], /^An ENTERPRISE key needs both --per-minute and --per-day$/],
    [['create', '--name', 'x', '--plan', 'pro', '--per-minute', '100', '--per-day', '1000'], /^--per-minute and --per-day are for ENTERPRISE keys/],
    [['create', '--name', 'x', '--plan', 'enterprise', '--per-minute', '0', '--per-day', '10'], /--per-minute must be at least 1/],
    [['create', '--verbose'], /Unknown option '--verbose'[^]*usage: npm run apikey/],
    [['delete', '--name', 'x', '--plan', 'free'], /usage/],
  ])('refuses %p', async (argv, message) => {
    await expect(parseCreateCommand(argv)).rejects.toThrow(message);
  });

  it('answers --help and -h with its usage', () => {
    expect(wantsHelp(['--help'])).toBe(true);
    expect(wantsHelp(['create', '-h'])).toBe(true);
    expect(wantsHelp(['create', '--name', 'x'])).toBe(false);
    expect(USAGE).toMatch(/^usage: npm run apikey -- create --name NAME --plan/);
  });
});

describe('key lookups', () => {
  it('are reused for 5 s: a key revoked by another instance stops working within that time', async () => {
    let now = 1_000_000;
    const service = new ApiKeyService(new Statements(t.db.dataSource), keyCache(() => now));
    const { key, id } = await createApiKey(t);
    expect(await service.authenticate(key)).toMatchObject({ id });
    // Another instance revokes it, straight in the shared database.
    await t.db.dataSource.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1', [id]);
    now += KEY_CACHE_TTL_MS - 1;
    expect(await service.authenticate(key)).toMatchObject({ id });
    now += 2;
    expect(await service.authenticate(key)).toBeNull();
  });

  it('are reused for unknown keys too, so a flood of invalid keys costs one statement per key', async () => {
    let now = 1_000_000;
    const service = new ApiKeyService(new Statements(t.db.dataSource), keyCache(() => now));
    const unknown = generateApiKey();
    const first = await countStatements(() => service.authenticate(unknown));
    expect(first).toHaveLength(1);
    const again = await countStatements(async () => {
      for (let i = 0; i < 5; i++) expect(await service.authenticate(unknown)).toBeNull();
    });
    expect(again).toEqual([]);
    now += KEY_CACHE_TTL_MS + 1;
    expect(await countStatements(() => service.authenticate(unknown))).toHaveLength(1);
  });

  it('are shared while under way: the parallel requests of a page with a key not yet cached cost one statement', async () => {
    const { key } = await createApiKey(t);
    const statements = await countStatements(async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, () => gql(t.url, '{ __typename }', undefined, { key })));
      expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));
    });
    expect(statements.filter((sql) => /api_keys/.test(sql))).toHaveLength(1);
  });

  it('forget a key at once when this instance revokes it', async () => {
    const { key, id } = await createApiKey(t);
    expect((await gql(t.url, '{ pets { totalCount } }', undefined, { key })).status).toBe(200);
    await gql(t.url, `mutation { revokeApiKey(id: "${id}") { id } }`, undefined, { key: t.adminKey });
    expect((await gql(t.url, '{ pets { totalCount } }', undefined, { key })).status).toBe(401);
  });
});
