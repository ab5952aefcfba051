import { runSlowCasesIn } from '../helpers/cases';

/** The live surface's slow cases, a busy event loop's shedding: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
