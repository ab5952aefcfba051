import { runCasesIn } from '../helpers/cases';

/** The limits surface as one test file, with the live updates' cases (test/live): see runCasesIn. */
runCasesIn(__dirname, '../live');
