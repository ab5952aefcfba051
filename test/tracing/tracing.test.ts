import { runCasesIn } from '../helpers/cases';

/** The tracing surface's cases that need no gateway process, the server span's attributes: see runCasesIn. */
runCasesIn(__dirname);
