import { runCasesIn } from '../helpers/cases';

/** The pets surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
