import Module from 'node:module';

/**
 * Runs `load` (constructing the instrumentations, then requiring the modules they patch) and takes
 * back the `require` hook it installed. An OpenTelemetry instrumentation patches a module as Node
 * loads it, through require-in-the-middle, which replaces `require` for the process's life and
 * looks up every later call: modules the gateway requires at each request (Apollo's query hash
 * requires `crypto` on each call) would go through it for nothing once pg and ioredis are patched.
 * What `load` has patched stays patched (their prototypes are); a module first required after it
 * would not be, so `load` requires every module an instrumentation patches.
 */
export function patchingWhile<T>(load: () => T): T {
  const { prototype } = Module as unknown as { prototype: { require: unknown } };
  const require = prototype.require;
  const getBuiltinModule = process.getBuiltinModule;
  try {
    return load();
  } finally {
    if (prototype.require !== require) prototype.require = require;
    if (process.getBuiltinModule !== getBuiltinModule) process.getBuiltinModule = getBuiltinModule;
  }
}
