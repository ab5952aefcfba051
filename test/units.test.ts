import { runCasesIn } from './helpers/cases';

/**
 * The cases that start no gateway, in one test file: the configuration and the documents that
 * describe it, and the parts of test/common, test/sql and test/tracing tested alone (see runCasesIn).
 */
runCasesIn(__dirname, 'common', 'sql', 'tracing');
