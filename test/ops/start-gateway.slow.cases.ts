import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pino from 'pino';
import { IN_MEMORY } from '../../src/db/in-memory';
import { startGateway } from '../../src/gateway';
import { migratedDataDir } from '../helpers/database';
import { gql } from '../helpers/gql';

/**
 * startGateway as `npm start` runs it: each case opens an embedded database of its own with the
 * demo catalogue loaded, one twice over a restart, so they run in `npm run test:slow`;
 * start-gateway.cases.ts has the cases given a database.
 */
const silent = pino({ level: 'silent' });
/** The environment of `npm start` on a machine with nothing else running, on a free port. */
const EMBEDDED = { PORT: '0', PGLITE_DATA_DIR: IN_MEMORY, LOG_LEVEL: 'silent' };

describe('startGateway', () => {
  it('starts as npm start does: embedded, the demo catalogue loaded, a generated admin key that works', async () => {
    const gateway = await startGateway({ env: EMBEDDED, logger: silent });
    try {
      expect(gateway.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
      expect(gateway.database.embedded).toBe(true);
      expect(gateway.generatedAdminKey).toMatch(/^psk_/);
      expect(gateway.config.adminApiKey).toBe(gateway.generatedAdminKey);
      const pets = await gql(gateway.url, '{ pets { totalCount } }');
      expect(pets.data?.pets.totalCount).toBeGreaterThan(0);
      const keys = await gql(gateway.url, '{ apiKeys { totalCount } }', undefined, { key: gateway.generatedAdminKey });
      expect(keys.errors).toBeUndefined();
    } finally {
      await gateway.close();
    }
    expect(gateway.server.listening).toBe(false);
    expect(gateway.database.dataSource.isInitialized).toBe(false);
  });

  it('keeps its admin key in the data directory: a restart on it makes the same key, and that key still works', async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gateway-key-'));
    const dataDir = (await migratedDataDir(join(parent, 'data'))) ?? join(parent, 'data');
    try {
      const env = { ...EMBEDDED, PGLITE_DATA_DIR: dataDir };
      const first = await startGateway({ env, logger: silent });
      await first.close();
      expect(first.adminKeyFile).toBe(join(dataDir, 'admin-api-key'));
      expect(statSync(first.adminKeyFile!).mode & 0o777).toBe(0o600);
      const second = await startGateway({ env, logger: silent });
      try {
        expect(second.generatedAdminKey).toBe(first.generatedAdminKey);
        const keys = await gql(second.url, '{ apiKeys { totalCount } }', undefined, { key: first.generatedAdminKey });
        expect(keys.errors).toBeUndefined();
      } finally {
        await second.close();
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });

  it("keeps a new data directory its owner's alone: the directory 0700, every file in it 0600, while it runs and after", async () => {
    const parent = mkdtempSync(join(tmpdir(), 'gateway-modes-'));
    const dataDir = join(parent, 'data');
    try {
      const gateway = await startGateway({ env: { ...EMBEDDED, PGLITE_DATA_DIR: dataDir }, logger: silent });
      const whileRunning = modesUnder(dataDir);
      await gateway.close();
      for (const modes of [whileRunning, modesUnder(dataDir)]) {
        expect(modes.size).toBeGreaterThan(100);
        expect(modes.get(dataDir)).toBe(0o700);
        expect([...modes].filter(([, mode]) => (mode & 0o077) !== 0)).toEqual([]);
      }
    } finally {
      rmSync(parent, { recursive: true, force: true });
    }
  });
});

/** The permission bits of `dir` and of everything under it, by path. */
function modesUnder(dir: string): Map<string, number> {
  const modes = new Map([[dir, statSync(dir).mode & 0o777]]);
  for (const name of readdirSync(dir, { recursive: true, encoding: 'utf8' })) modes.set(join(dir, name), statSync(join(dir, name)).mode & 0o777);
  return modes;
}
