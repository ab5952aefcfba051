import { runSlowCasesIn } from '../helpers/cases';

/**
 * The ops surface's slow cases, each a gateway process started and stopped, and the database's, on
 * a catalogue of 100,000 pets (test/db): see runSlowCasesIn.
 */
runSlowCasesIn(__dirname, '../db');
