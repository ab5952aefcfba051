import { runCasesIn } from '../helpers/cases';

/** The live surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
