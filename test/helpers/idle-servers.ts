import type { EmbeddedPostgres } from '../../src/db/embedded';

/**
 * Embedded servers that a closed test database gave back, emptied, for the next one of the same
 * test file (test/helpers/database.ts). Loading a PGlite from the template costs half a second;
 * emptying one a few milliseconds. A test file stops what is left when it ends (test/setup/
 * after-env.ts), so that a Jest worker running another file holds none of them.
 */
const idle: EmbeddedPostgres[] = [];

export function takeIdleServer(): EmbeddedPostgres | undefined {
  return idle.pop();
}

export function giveBackServer(server: EmbeddedPostgres): void {
  idle.push(server);
}

export async function stopIdleServers(): Promise<void> {
  await Promise.all(idle.splice(0).map((server) => server.stop()));
}
