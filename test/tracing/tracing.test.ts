import { runCasesIn } from '../helpers/cases';

/** The tracing surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
