import { runCasesIn } from '../helpers/cases';

/** The db surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
