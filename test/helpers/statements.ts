import { Client } from 'pg';

/** `pg`'s Client#query, as the wrappers below see it. */
export type ClientQuery = (this: Client, ...args: unknown[]) => unknown;

/**
 * Runs `action` with every `pg` client of this process sending its statements through
 * `wrap(original)`, below TypeORM so that nothing goes unseen, and restores the driver after.
 */
export async function withClientQuery(wrap: (original: ClientQuery) => ClientQuery, action: () => Promise<unknown>): Promise<void> {
  const original = Client.prototype.query;
  Client.prototype.query = wrap(original as ClientQuery) as typeof Client.prototype.query;
  try {
    await action();
  } finally {
    Client.prototype.query = original;
  }
}

/** The SQL statements every `pg` client of this process sends while `action` runs. */
export async function countStatements(action: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  await withClientQuery(
    (original) =>
      function (this: Client, ...args: unknown[]) {
        const [config] = args as [string | { text: string }];
        statements.push(typeof config === 'string' ? config : config.text);
        return original.apply(this, args);
      },
    action,
  );
  return statements;
}
