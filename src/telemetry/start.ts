import { startTracing } from '.';

/**
 * Imported first by the process (src/main.ts): tracing, when the OTEL_* variables ask for it,
 * starts before the gateway's modules require pg and ioredis, which its instrumentations patch as they load.
 */
startTracing(process.env);
