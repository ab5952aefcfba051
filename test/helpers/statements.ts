import { Client } from 'pg';
import { CATALOGUE_SIZE } from '../../src/pets/pet.queries';

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

/**
 * The SQL statements every `pg` client of this process sends while `action` runs, but the read of
 * the catalogue's size that pricing starts in the background when its last is 5 s old: no
 * request waits for it, and counting it would make a request's count depend on the clock.
 */
export async function countStatements(action: () => Promise<unknown>): Promise<string[]> {
  const statements: string[] = [];
  await withClientQuery(
    (original) =>
      function (this: Client, ...args: unknown[]) {
        const [config] = args as [string | { text: string }];
        const text = typeof config === 'string' ? config : config.text;
        if (text !== CATALOGUE_SIZE.text) statements.push(text);
        return original.apply(this, args);
      },
    action,
  );
  return statements;
}
