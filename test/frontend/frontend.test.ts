import { runCasesIn } from '../helpers/cases';

/** The frontend surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
