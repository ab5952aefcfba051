import { runCasesIn } from '../helpers/cases';

/** The graphql surface as one test file, with the response cache's cases (test/cache): see runCasesIn. */
runCasesIn(__dirname, '../cache');
