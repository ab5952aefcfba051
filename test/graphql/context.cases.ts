import { type Services, createContext, createLoaders } from '../../src/context';

/** What Apollo Server does to the context of each operation (its `cloneObject`). */
const cloneAsApolloDoes = <T extends object>(object: T): T => Object.assign(Object.create(Object.getPrototypeOf(object)), object);

describe('a request context', () => {
  it('makes its loaders on first use, not when Apollo Server copies it, and keeps them', () => {
    const context = cloneAsApolloDoes(createContext({ kind: 'anonymous', address: '127.0.0.1' }, {} as Services));
    // A copy that called the getter would hold the loaders as a plain value already.
    expect(Object.getOwnPropertyDescriptor(context, 'loaders')).toBeUndefined();
    expect(Object.values(context).some((value) => value && typeof value === 'object' && 'petById' in value)).toBe(false);
    const loaders = context.loaders;
    expect(loaders.petById).toBeDefined();
    expect(context.loaders).toBe(loaders);
  });

  it('makes each loader on first use and keeps it, one set per request', () => {
    const services = { pets: {}, categories: {}, inventory: {}, orders: {} } as unknown as Services;
    const loaders = createLoaders(services);
    expect(loaders.categoryById).toBe(loaders.categoryById);
    expect(loaders.orderById).toBe(loaders.orderById);
    expect(loaders.inventoryByPetId).toBe(loaders.inventoryByPetId);
    expect(loaders.petById).toBe(loaders.petById);
    const scope = { apiKeyId: '1', admin: false };
    expect(loaders.visibleOrderById(scope)).toBe(loaders.visibleOrderById({ ...scope }));
    expect(loaders.visibleOrderById({ apiKeyId: '2', admin: false })).not.toBe(loaders.visibleOrderById(scope));
    expect(createLoaders(services).categoryById).not.toBe(loaders.categoryById);
  });
});

describe("Apollo Server's copy of the context (what the getter on the prototype relies on)", () => {
  it('hands resolvers a copy with the context prototype and its own properties, never reading its getters', async () => {
    const { ApolloServer, HeaderMap } = await import('@apollo/server');
    const { buildSchema } = await import('graphql');
    const seen: { copy: boolean; prototype: boolean; ownLoaders: boolean }[] = [];
    const given = createContext({ kind: 'anonymous', address: '127.0.0.1' }, {} as Services);
    const server = new ApolloServer<typeof given>({
      schema: buildSchema('type Query { probe: Boolean }'),
      rootValue: {
        probe: (_args: unknown, context: typeof given) => {
          seen.push({
            copy: context !== given,
            prototype: Object.getPrototypeOf(context) === Object.getPrototypeOf(given),
            ownLoaders: Object.getOwnPropertyDescriptor(context, 'loaders') !== undefined,
          });
          return context.caller === given.caller && context.services === given.services;
        },
      },
    });
    await server.start();
    try {
      const response = await server.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: 'POST', headers: new HeaderMap([['content-type', 'application/json']]), search: '', body: { query: '{ probe }' } },
        context: () => Promise.resolve(given),
      });
      expect(response.body.kind === 'complete' && JSON.parse(response.body.string)).toEqual({ data: { probe: true } });
      // On an upgrade that stops copying (or copies getters' values), drop or move the getter (context.ts).
      expect(seen).toEqual([{ copy: true, prototype: true, ownLoaders: false }]);
    } finally {
      await server.stop();
    }
  });
});
