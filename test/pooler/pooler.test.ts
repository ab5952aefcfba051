import { runCasesIn } from '../helpers/cases';

/** The gateway behind a transaction-mode PgBouncer (docs/contract.md §2) as one test file: see runCasesIn. */
runCasesIn(__dirname);
