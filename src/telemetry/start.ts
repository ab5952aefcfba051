import { startTracing } from '.';

/**
 * Imported first by the process (src/main.ts): tracing, when the OTEL_* variables ask for it,
 * starts before the gateway's modules require http, pg and ioredis, so that they load patched.
 */
startTracing(process.env);
