import { execFile } from 'node:child_process';
import { dirname } from 'node:path';
import { promisify } from 'node:util';
import { GatewayProgram } from '../helpers/gateway-process';

/**
 * What a process that imports src/db/postgres-driver-only.ts first (src/main.ts does) loads of
 * TypeORM's drivers, and what it does if asked for another database. Jest keeps a module cache of
 * its own, so this runs in a process of its own, transpiled as `npm run build` transpiles it.
 */
const PROBE = `
  const { dirname, relative } = require('node:path');
  require(process.argv[1]);
  const { DataSource } = require('typeorm');
  const drivers = dirname(require.resolve('typeorm/driver/DriverFactory'));
  const queryRunners = Object.keys(require.cache).filter((file) => file.startsWith(drivers) && file.endsWith('QueryRunner.js')).map((file) => relative(drivers, file));
  new DataSource({ type: 'postgres', url: 'postgres://127.0.0.1/unused' });
  let refusal;
  try {
    new DataSource({ type: 'mysql' });
  } catch (error) {
    refusal = error.message;
  }
  console.log(JSON.stringify({ queryRunners, refusal }));
`;

let program: GatewayProgram;
beforeAll(() => {
  program = GatewayProgram.transpile();
});
afterAll(() => program.remove());

it("loads TypeORM's PostgreSQL driver only, and refuses a DataSource of another database in so many words", async () => {
  const module = program.transpiled('src/db/postgres-driver-only.ts');
  const { stdout } = await promisify(execFile)(process.execPath, ['-e', PROBE, module], { cwd: dirname(module) });
  expect(JSON.parse(stdout)).toEqual({
    queryRunners: ['postgres/PostgresQueryRunner.js'],
    refusal: "TypeORM's MysqlDriver is not loaded: the gateway runs on PostgreSQL only (src/db/postgres-driver-only.ts)",
  });
});
