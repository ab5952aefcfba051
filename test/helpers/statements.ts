import { Client } from 'pg';

/**
 * Counts the SQL statements every `pg` client of this process sends while `action` runs:
 * a counting wrapper around the driver, below TypeORM, so that nothing goes uncounted.
 */
export async function countStatements(action: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  const original = Client.prototype.query;
  Client.prototype.query = function (this: Client, ...args: unknown[]) {
    const [config] = args as [string | { text: string }];
    statements.push(typeof config === 'string' ? config : config.text);
    return (original as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof Client.prototype.query;
  try {
    await action();
  } finally {
    Client.prototype.query = original;
  }
  return statements;
}
