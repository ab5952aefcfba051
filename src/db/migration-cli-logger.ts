import type { Logger } from 'typeorm';

/**
 * The TypeORM CLI's logger: the CLI turns query logging on for `migration:run`, which would print
 * every statement of every migration. This says one line per migration applied or reverted, or
 * that none was pending; failures reach the console through the error the CLI prints.
 */
export class MigrationCliLogger implements Logger {
  logSchemaBuild(message: string): void {
    if (/^(Migration \S+ has been|No migrations)/.test(message)) console.log(message);
  }

  logMigration(message: string): void {
    console.error(message);
  }

  logQuery(): void {}
  logQueryError(): void {}
  logQuerySlow(): void {}
  log(): void {}
}
