import { runSlowCasesIn } from '../helpers/cases';

/** The pets surface's slow cases, on catalogues of 10,000 pets and more: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
