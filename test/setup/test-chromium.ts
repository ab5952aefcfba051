/**
 * The environment variable through which the global setup (global-setup.ts) hands the test files
 * the Chromium it unpacked (extract-chromium.ts), as JSON: a TestChromium, or `{ problem }` saying
 * in one line why there is none.
 */
export const TEST_CHROMIUM = 'PETSTORE_TEST_CHROMIUM';

export interface TestChromium {
  executable: string;
  /** The package's own NSS and expat, which a bare machine lacks: searched first. */
  libraries: string;
  /** The machine's fonts and the package's. */
  fontConfig: string;
}
