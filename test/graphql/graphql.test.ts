import { runCasesIn } from '../helpers/cases';

/** The graphql surface as one test file: see runCasesIn. */
runCasesIn(__dirname);
