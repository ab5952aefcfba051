import { runCasesIn } from '../helpers/cases';

/**
 * The domain surface as one test file: the catalogue, orders and stock, the REST paths and the API
 * keys that reach them; with the operations' cases (test/ops) and the database's (test/db): see
 * runCasesIn.
 */
runCasesIn(__dirname, '../ops', '../db');
