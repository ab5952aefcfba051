import { runCasesIn } from '../helpers/cases';

/** The limits surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
