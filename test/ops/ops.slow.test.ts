import { runSlowCasesIn } from '../helpers/cases';

/** The ops surface's slow cases, each a gateway process started and stopped: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
