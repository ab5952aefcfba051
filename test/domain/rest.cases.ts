import request from 'supertest';
import { generateApiKey } from '../../src/auth/key-secret';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, createCategory, createPet, placeOrder, stockedPet } from '../helpers/builders';
import { gql } from '../helpers/gql';
import { OpenApiContract } from '../helpers/openapi';
import { printFigure } from '../helpers/figures';

let t: TestApp;
let contract: OpenApiContract;
beforeAll(async () => {
  t = await startTestApp({ PETS_SUNSET: '2099-01-01T00:00:00Z' });
  contract = await OpenApiContract.from((await request(t.url).get('/openapi.json')).body);
});
afterAll(async () => {
  await t.close();
  printFigure(`REST responses checked against the OpenAPI document: ${contract.checked}`);
});

const getPet = async (id: string, headers: Record<string, string> = {}) => {
  const response = await request(t.url).get(`/pets/${id}`).set(headers);
  contract.expectDocumented(response, 'GET', '/pets/{petId}');
  return response;
};

const getOrders = async (query: string, key?: string) => {
  const call = request(t.url).get(`/store/orders${query}`);
  if (key) call.set('X-API-Key', key);
  const response = await call;
  contract.expectDocumented(response, 'GET', '/store/orders');
  return response;
};

describe('GET /pets/{petId}', () => {
  it('returns the pet with ids as JSON numbers, to anonymous callers', async () => {
    const categoryId = await createCategory(t);
    const id = await createPet(t, categoryId, 'Rex', 'PENDING');
    const response = await getPet(id);
    expect(response.status).toBe(200);
    expect(response.headers['content-type']).toMatch(/^application\/json/);
    expect(response.body).toEqual({ id: Number(id), name: 'Rex', categoryId: Number(categoryId), status: 'pending' });
  });

  it('announces its deprecation, sunset and successor', async () => {
    const id = await createPet(t, await createCategory(t));
    const response = await getPet(id);
    expect(response.headers.deprecation).toBe('@1793491200');
    expect(response.headers.sunset).toBe('Thu, 01 Jan 2099 00:00:00 GMT');
    expect(response.headers.link).toBe('</graphql>; rel="successor-version"');
  });

  it.each(['abc', '-1', '0', '1.5', '9223372036854775808', '%20'])('refuses the id %p with 400 BAD_USER_INPUT', async (id) => {
    const response = await getPet(id);
    expect(response.status).toBe(400);
    expect(response.body).toMatchObject({ code: 'BAD_USER_INPUT', status: 400 });
    expect(response.body.message).toMatch(/petId/);
  });

  it('answers an unknown pet with 404 NOT_FOUND', async () => {
    const response = await getPet('9223372036854775807');
    expect(response.status).toBe(404);
    expect(response.body).toEqual({ code: 'NOT_FOUND', message: 'Pet 9223372036854775807 not found', status: 404 });
  });

  it('refuses an invalid key with 401 INVALID_API_KEY', async () => {
    const response = await getPet('1', { 'X-API-Key': generateApiKey() });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe('INVALID_API_KEY');
  });

  it('refuses a client that accepts no JSON with 406', async () => {
    const response = await getPet('1', { Accept: 'text/html' });
    expect(response.status).toBe(406);
    expect(response.body.code).toBe('NOT_ACCEPTABLE');
  });

  it('answers 410 GONE after the sunset, still naming the successor', async () => {
    const retired = await startTestApp({ PETS_SUNSET: '2020-01-01T00:00:00Z', ADMIN_API_KEY: t.adminKey }, { db: t.db });
    try {
      const response = await request(retired.url).get('/pets/1');
      contract.expectDocumented(response, 'GET', '/pets/{petId}');
      expect(response.status).toBe(410);
      expect(response.body).toEqual({
        code: 'GONE',
        message: 'GET /pets/{petId} was retired on 2020-01-01T00:00:00.000Z; use /graphql instead',
        status: 410,
      });
      expect(response.headers.link).toBe('</graphql>; rel="successor-version"');
    } finally {
      await retired.close();
    }
  });
});

describe('GET /store/orders', () => {
  it('needs a key: 401 UNAUTHENTICATED', async () => {
    const response = await getOrders('');
    expect(response.status).toBe(401);
    expect(response.body).toEqual({ code: 'UNAUTHENTICATED', message: 'This operation needs an API key in the X-API-Key header', status: 401 });
  });

  it("lists the caller's own orders, newest first, with X-Total-Count; an admin sees all", async () => {
    const alice = (await createApiKey(t, { name: 'alice' })).key;
    const bob = (await createApiKey(t, { name: 'bob' })).key;
    const petId = await stockedPet(t, 20);
    const mine: number[] = [];
    for (let i = 0; i < 3; i += 1) mine.push(Number((await placeOrder(t, alice, petId, i + 1, undefined, '2030-05-06T07:08:09Z')).data?.placeOrder.id));
    const theirs = Number((await placeOrder(t, bob, petId, 1)).data?.placeOrder.id);

    const response = await getOrders('', alice);
    expect(response.status).toBe(200);
    expect(response.headers['x-total-count']).toBe('3');
    expect(response.body).toEqual([
      { id: mine[2], petId: Number(petId), quantity: 3, shipDate: '2030-05-06T07:08:09.000Z', complete: false },
      { id: mine[1], petId: Number(petId), quantity: 2, shipDate: '2030-05-06T07:08:09.000Z', complete: false },
      { id: mine[0], petId: Number(petId), quantity: 1, shipDate: '2030-05-06T07:08:09.000Z', complete: false },
    ]);

    const admin = await getOrders(`?petId=${petId}`, t.adminKey);
    expect(admin.headers['x-total-count']).toBe('4');
    expect(admin.body[0]).toMatchObject({ id: theirs, shipDate: null });
  });

  it('filters by complete and petId and pages with limit and offset', async () => {
    const carol = (await createApiKey(t, { name: 'carol' })).key;
    const petA = await stockedPet(t, 10, 'A');
    const petB = await stockedPet(t, 10, 'B');
    const ids: number[] = [];
    for (const petId of [petA, petA, petB, petA]) ids.push(Number((await placeOrder(t, carol, petId, 1)).data?.placeOrder.id));
    await gql(t.url, `mutation { completeOrder(id: "${ids[0]}") { id } }`, undefined, { key: t.adminKey });

    const ofA = await getOrders(`?petId=${petA}`, carol);
    expect(ofA.body.map((o: any) => o.id)).toEqual([ids[3], ids[1], ids[0]]);
    const done = await getOrders('?complete=true', carol);
    expect(done.body.map((o: any) => o.id)).toEqual([ids[0]]);
    expect(done.body[0].complete).toBe(true);
    const open = await getOrders('?complete=false', carol);
    expect(open.headers['x-total-count']).toBe('3');
    const page = await getOrders('?limit=2&offset=1', carol);
    expect(page.body.map((o: any) => o.id)).toEqual([ids[2], ids[1]]);
    expect(page.headers['x-total-count']).toBe('4');
    const beyond = await getOrders('?offset=10', carol);
    expect(beyond.body).toEqual([]);
    const ignored = await getOrders('?sort=asc&foo=bar', carol);
    expect(ignored.body).toHaveLength(4);
  });

  it.each([
    ['complete=yes', 'complete'],
    ['complete=', 'complete'],
    ['petId=abc', 'petId'],
    ['petId=0', 'petId'],
    ['limit=0', 'limit'],
    ['limit=101', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=-1', 'limit'],
    ['offset=-1', 'offset'],
    ['offset=x', 'offset'],
    ['limit=1&limit=2', 'limit'],
  ])('refuses ?%s with 400 BAD_USER_INPUT naming %s', async (query, parameter) => {
    const response = await getOrders(`?${query}`, t.adminKey);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe('BAD_USER_INPUT');
    expect(response.body.message.startsWith(`${parameter}`)).toBe(true);
  });
});

describe('other paths and methods', () => {
  it.each([
    ['post', '/pets/1'],
    ['delete', '/pets/1'],
    ['put', '/store/orders'],
    ['post', '/openapi.json'],
  ] as const)('%s %s is 405 METHOD_NOT_ALLOWED with Allow', async (method, path) => {
    const response = await request(t.url)[method](path);
    expect(response.status).toBe(405);
    expect(response.headers.allow).toBe('GET, HEAD');
    expect(response.body).toMatchObject({ code: 'METHOD_NOT_ALLOWED', status: 405 });
  });

  it.each(['/pets', '/store', '/store/orders/1', '/pets/1/photos', '/v2/pets/1'])('%s is 404 NOT_FOUND as an Error object', async (path) => {
    const response = await request(t.url).get(path);
    expect(response.status).toBe(404);
    expect(Object.keys(response.body).sort()).toEqual(['code', 'message', 'status']);
    expect(response.body.code).toBe('NOT_FOUND');
  });
});

describe('GET /openapi.json', () => {
  it('is a valid OpenAPI 3.0.3 document of the REST surface, version 1.0.0', async () => {
    const response = await request(t.url).get('/openapi.json');
    expect(response.status).toBe(200);
    const document = response.body;
    expect(document.openapi).toBe('3.0.3');
    expect(document.info.version).toBe('1.0.0');
    expect(document.tags.map((tag: any) => tag.name)).toEqual(['Pets', 'Store']);
    expect(document.paths['/pets/{petId}'].get.deprecated).toBe(true);
    expect(document.components.securitySchemes.apiKey).toEqual(expect.objectContaining({ type: 'apiKey', in: 'header', name: 'X-API-Key' }));
    expect(Object.keys(document.components.schemas)).toEqual(
      expect.arrayContaining(['NewPet', 'Pet', 'Pets', 'NewCategory', 'Category', 'Order', 'InventoryItem', 'InventoryUpdate', 'Error']),
    );
    await expect(OpenApiContract.from(document)).resolves.toBeDefined();
  });

  it('states the bounds the gateway enforces', async () => {
    const { components, paths } = (await request(t.url).get('/openapi.json')).body;
    const parameter = (name: string) => paths['/store/orders'].get.parameters.find((p: any) => p.name === name).schema;
    for (const name of ['limit', 'offset']) {
      const { maximum } = parameter(name);
      expect((await getOrders(`?${name}=${maximum}`, t.adminKey)).status).toBe(200);
      expect((await getOrders(`?${name}=${maximum + 1}`, t.adminKey)).status).toBe(400);
    }
    const { default: pageSize } = parameter('limit');
    // More orders than a page, from keys enough to stay under placeOrder's limit per key.
    const petId = await stockedPet(t, pageSize + 1);
    for (let i = 0; i <= pageSize; i += 5) {
      const key = (await createApiKey(t, { name: `buyer ${i}` })).key;
      for (let j = i; j < Math.min(i + 5, pageSize + 1); j++) await placeOrder(t, key, petId, 1);
    }
    const all = await getOrders('', t.adminKey);
    expect(Number(all.headers['x-total-count'])).toBeGreaterThan(pageSize);
    expect(all.body).toHaveLength(pageSize);

    const { maxLength: nameMax } = components.schemas.NewCategory.properties.name;
    const { maxLength: descriptionMax } = components.schemas.NewCategory.properties.description;
    expect(components.schemas.NewPet.properties.name.maxLength).toBe(nameMax);
    const create = (name: string, description: string) =>
      gql(t.url, 'mutation($input: NewCategory!) { createCategory(input: $input) { id } }', { input: { name, description } }, { key: t.adminKey });
    expect((await create('n'.repeat(nameMax), 'd'.repeat(descriptionMax))).errors).toBeUndefined();
    expect((await create('n'.repeat(nameMax + 1), 'd')).errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await create('n', 'd'.repeat(descriptionMax + 1))).errors?.[0].extensions.code).toBe('BAD_USER_INPUT');
  });
});
