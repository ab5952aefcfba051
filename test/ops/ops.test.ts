import { runCasesIn } from '../helpers/cases';

/** The ops surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
