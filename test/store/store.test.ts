import { runCasesIn } from '../helpers/cases';

/** The store surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
