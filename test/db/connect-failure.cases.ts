import { randomBytes } from 'node:crypto';
import { describeConnectFailure } from '../../src/db/connect-failure';
import { withDatabase } from '../helpers/database';
import { completion, GatewayProgram } from '../helpers/gateway-process';
import { describeWhen } from '../helpers/services';

const URL_OF_MISSING = 'postgres://app:secret@db.internal:6543/petstore';

describe('describeConnectFailure', () => {
  it('names a missing database and how to create it, in one line', () => {
    const line = describeConnectFailure({ code: '3D000', message: 'database "petstore" does not exist' }, URL_OF_MISSING);
    expect(line).toBe(
      'Database error: database "petstore" does not exist on db.internal:6543. ' +
        'Create it with `createdb -h db.internal -p 6543 -U app petstore` (or CREATE DATABASE in psql), ' +
        'or set DATABASE_URL to one that exists.',
    );
  });

  it('names a refused user and an unreachable server, never the password', () => {
    const refused = describeConnectFailure({ code: '28P01', message: 'password authentication failed for user "app"' }, URL_OF_MISSING);
    expect(refused).toMatch(/^Database error: PostgreSQL on db\.internal:6543 refused user "app" \(password authentication failed/);
    const unreachable = describeConnectFailure(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }), URL_OF_MISSING);
    expect(unreachable).toBe('Database error: PostgreSQL on db.internal:6543 cannot be reached (ECONNREFUSED); is it running, and is DATABASE_URL right?');
    for (const line of [refused, unreachable]) expect(line).not.toContain('secret');
  });

  it('leaves anything else to be shown with its stack', () => {
    expect(describeConnectFailure(new TypeError('undefined is not a function'), URL_OF_MISSING)).toBeUndefined();
  });
});

const withPostgres = describeWhen(!process.env.DATABASE_URL && 'DATABASE_URL (services mode)');

withPostgres('npm start on a DATABASE_URL whose database does not exist', () => {
  let program: GatewayProgram;
  beforeAll(() => {
    program = GatewayProgram.transpile();
  });
  afterAll(() => program.remove());

  it('exits 1 with one line that names the database and how to create it, no error object or stack', async () => {
    const missing = `petstore_missing_${randomBytes(4).toString('hex')}`;
    const url = withDatabase(process.env.DATABASE_URL as string, missing);
    const { code, stdout, stderr } = await completion(program.start({ DATABASE_URL: url, PORT: '0', LOG_LEVEL: 'silent' }));
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    const lines = stderr.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(new RegExp(`^Database error: database "${missing}" does not exist on .+\\. Create it with \`createdb .+ ${missing}\``));
  });
});
