import { runSlowCasesIn } from '../helpers/cases';

/** The limits surface's slow cases, attacks held for seconds and aborts repeated: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
