import Module from 'node:module';
import { patchingWhile } from '../../src/telemetry/require-hook';

/**
 * `require` given back once the instrumentations have patched what they patch
 * (src/telemetry/require-hook.ts). That pg's and ioredis's spans are still made after it, the
 * gateway's traces show (tracing.cases.ts).
 */
const prototype = Module.prototype as unknown as { require: unknown };

describe('patching while a require hook is installed', () => {
  it('gives back require and getBuiltinModule as they were, and what the hook patched stays patched', () => {
    const require = prototype.require;
    const getBuiltinModule = process.getBuiltinModule;
    const patched = { query: () => 'bare' };
    const result = patchingWhile(() => {
      // As require-in-the-middle does when an instrumentation is made.
      prototype.require = function hooked() {};
      patched.query = () => 'wrapped';
      return 'loaded';
    });
    expect(result).toBe('loaded');
    expect(prototype.require).toBe(require);
    expect(process.getBuiltinModule).toBe(getBuiltinModule);
    expect(patched.query()).toBe('wrapped');
  });

  it('gives them back when loading fails', () => {
    const require = prototype.require;
    expect(() =>
      patchingWhile(() => {
        prototype.require = function hooked() {};
        throw new Error('no such module');
      }),
    ).toThrow('no such module');
    expect(prototype.require).toBe(require);
  });
});
