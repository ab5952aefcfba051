import { setMaxListeners } from 'node:events';
import type { Trace } from './trace';

/** Listeners one scope's signal may have before Node warns of a leak. */
const MAX_LISTENERS = 256;

/**
 * What a wait or a running statement listens to for its client's going: a Scope, or an
 * AbortSignal through `watchSignal`.
 */
export interface AbortWatch {
  readonly aborted: boolean;
  /** Why, once aborted. */
  readonly reason: unknown;
  /** Calls `listener` once, on the abort; the returned function stops listening. */
  onAbort(listener: () => void): () => void;
}

/** An AbortSignal as an AbortWatch. */
export function watchSignal(signal: AbortSignal): AbortWatch {
  return {
    get aborted() {
      return signal.aborted;
    },
    get reason(): unknown {
      return signal.reason;
    },
    onAbort(listener) {
      signal.addEventListener('abort', listener, { once: true });
      return () => signal.removeEventListener('abort', listener);
    },
  };
}

/**
 * What one request (or stream) holds, and the signal that its client has gone. Whatever a step
 * takes (an in-flight slot, a queue place, a stream entry, a statement slot) it registers here the
 * moment it takes it, before anything awaits: each release then runs once, when the scope ends, or
 * at once when it has already ended. No ordering of events can skip one, as with `try…finally`.
 *
 * Every request has a scope and most clients stay: the scope keeps its own listeners, and makes
 * an AbortSignal (an EventTarget, costly to make and to listen to) only for an API that needs one.
 */
export class Scope implements AbortWatch {
  private controller: AbortController | undefined;
  private gone: ClientGone | undefined;
  private listeners: Set<() => void> | undefined;
  private releases: (() => void)[] | undefined = [];
  /** The request's trace, when its sampler keeps it: what its statements and Redis calls are children of. */
  trace: Trace | undefined = undefined;

  /** True once the client has gone. */
  get aborted(): boolean {
    return this.gone !== undefined;
  }

  get reason(): ClientGone | undefined {
    return this.gone;
  }

  /** Aborted when the client goes away, for APIs that take an AbortSignal. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      // Past Node's default warning at 10 listeners: a request's waits may all listen.
      setMaxListeners(MAX_LISTENERS, this.controller.signal);
      if (this.gone) this.controller.abort(this.gone);
    }
    return this.controller.signal;
  }

  /** Calls `listener` once when the client goes away (waits end at once, running statements are cancelled). */
  onAbort(listener: () => void): () => void {
    if (this.gone) return () => undefined;
    (this.listeners ??= new Set()).add(listener);
    return () => void this.listeners?.delete(listener);
  }

  /** The client went away before its answer was sent. */
  abort(): void {
    if (this.gone) return;
    this.gone = new ClientGone();
    this.controller?.abort(this.gone);
    const listeners = this.listeners;
    this.listeners = undefined;
    listeners?.forEach((listener) => listener());
  }

  /** True once the scope has ended and given everything back. */
  get ended(): boolean {
    return this.releases === undefined;
  }

  /**
   * Registers `release` for the end of the scope (runs it now if the scope has ended). Returns a
   * function that gives it back sooner; either way it runs once.
   */
  defer(release: () => unknown): () => void {
    let done = false;
    const once = () => {
      if (done) return;
      done = true;
      release();
    };
    if (this.releases) this.releases.push(once);
    else once();
    return once;
  }

  /** Gives back everything registered, latest first. */
  end(): void {
    const releases = this.releases;
    this.releases = undefined;
    if (!releases) return;
    for (let i = releases.length - 1; i >= 0; i -= 1) releases[i]();
  }
}

/** The reason of an aborted scope: the client went away. */
export class ClientGone extends Error {
  constructor() {
    super('the client went away');
    this.name = 'ClientGone';
  }
}
