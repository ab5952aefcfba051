import { runSlowCasesIn } from '../helpers/cases';

/** The db surface's slow cases, on a catalogue of 100,000 pets: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
