import { runSlowCasesIn } from '../helpers/cases';

/** The tracing surface's slow cases, a gateway process each: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
