import { runSlowCasesIn } from '../helpers/cases';

/**
 * The graphql surface's slow cases, on a catalogue grown to 100,000 pets and over the oracle's
 * generated documents: see runSlowCasesIn.
 */
runSlowCasesIn(__dirname);
