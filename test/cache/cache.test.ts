import { runCasesIn } from '../helpers/cases';

/** The response cache as one test file: see runCasesIn. */
runCasesIn(__dirname);
