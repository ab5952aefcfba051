import { runCasesIn } from '../helpers/cases';

/** The faults surface (servers restarted under load) as one slow test file: see runCasesIn. */
runCasesIn(__dirname);
