import { setMaxListeners } from 'node:events';

/** Listeners one scope's signal may have before Node warns of a leak. */
const MAX_LISTENERS = 256;

/**
 * What one request (or stream) holds, and the signal that its client has gone. Whatever a step
 * takes (an in-flight slot, a queue place, a stream entry, a statement slot) it registers here the
 * moment it takes it, before anything awaits: each release then runs once, when the scope ends, or
 * at once when it has already ended. No ordering of events can skip one, as with `try…finally`.
 */
export class Scope {
  private readonly controller = new AbortController();
  private releases: (() => void)[] | undefined = [];

  constructor() {
    // Each of a request's statements listens while it waits or runs; the statement budget bounds
    // them at 200 a request, past Node's default warning at 10.
    setMaxListeners(MAX_LISTENERS, this.controller.signal);
  }

  /** Aborted when the client goes away: waits end at once, running statements are cancelled. */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  /** True once the scope has ended and given everything back. */
  get ended(): boolean {
    return this.releases === undefined;
  }

  /** The client went away before its answer was sent. */
  abort(): void {
    if (!this.controller.signal.aborted) this.controller.abort(new ClientGone());
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
