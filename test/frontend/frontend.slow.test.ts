import { runSlowCasesIn } from '../helpers/cases';

/**
 * The frontend surface's slow cases, the TypeScript compiler's run over the generated code and a
 * page's request retried after its Retry-After: see runSlowCasesIn.
 */
runSlowCasesIn(__dirname);
