import { type AddressInfo, createServer, type Server } from 'node:net';
import pino from 'pino';
import { generateApiKey } from '../../src/auth/key-secret';
import { IN_MEMORY } from '../../src/db/in-memory';
import { startGateway } from '../../src/gateway';
import { createTestDatabase, type TestDatabase } from '../helpers/database';
import { gql } from '../helpers/gql';

/** startGateway given a database; start-gateway.slow.cases.ts has it as `npm start` runs it, opening its own. */
const silent = pino({ level: 'silent' });
/** The environment of `npm start` on a machine with nothing else running, on a free port. */
const EMBEDDED = { PORT: '0', PGLITE_DATA_DIR: IN_MEMORY, LOG_LEVEL: 'silent' };

describe('startGateway with a database', () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(() => database.close());

  it('serves a database it is given as it is: no demo catalogue, left open on close', async () => {
    const adminKey = generateApiKey();
    const gateway = await startGateway({ env: { ...EMBEDDED, ADMIN_API_KEY: adminKey }, database, logger: silent });
    try {
      expect(gateway.generatedAdminKey).toBeUndefined();
      expect((await gql(gateway.url, '{ pets { totalCount } }')).data?.pets.totalCount).toBe(0);
      const keys = await gql(gateway.url, '{ apiKeys { totalCount } }', undefined, { key: adminKey });
      expect(keys.errors).toBeUndefined();
    } finally {
      await gateway.close();
    }
    expect(database.dataSource.isInitialized).toBe(true);
  });

  it('rejects when it cannot listen, rather than crash the process', async () => {
    const taken: Server = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      await expect(startGateway({ env: { ...EMBEDDED, PORT: String(port) }, database, logger: silent })).rejects.toThrow(
        `PORT: expected a port no other process listens on at 127.0.0.1 (stop that process, or set PORT to another; 0 picks a free one), got "${port}"`,
      );
    } finally {
      await new Promise<void>((resolve) => taken.close(() => resolve()));
    }
    expect(database.dataSource.isInitialized).toBe(true);
  });
});
