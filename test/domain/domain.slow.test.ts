import { runSlowCasesIn } from '../helpers/cases';

/** The domain surface's slow cases, on catalogues of 10,000 pets and more and races repeated: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
