import { runCasesIn } from '../helpers/cases';

/** The guides' set-up commands, run as written on servers of the test's own: see runCasesIn. */
runCasesIn(__dirname);
