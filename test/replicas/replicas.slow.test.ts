import { runCasesIn } from '../helpers/cases';

/** Read replicas (docs/contract.md "Read replicas") on a primary and a streaming replica of the test's own, as one test file: see runCasesIn. */
runCasesIn(__dirname);
