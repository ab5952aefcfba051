import { runCasesIn } from '../helpers/cases';
import { closeChromium } from './browser';

/** The frontend surface as one test file: see runCasesIn. Its browser cases share one Chromium. */
afterAll(closeChromium);
runCasesIn(__dirname);
