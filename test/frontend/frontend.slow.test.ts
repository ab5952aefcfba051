import { runSlowCasesIn } from '../helpers/cases';

/** The frontend surface's slow cases, the TypeScript compiler's run over the generated code: see runSlowCasesIn. */
runSlowCasesIn(__dirname);
