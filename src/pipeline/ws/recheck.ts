import type { Caller } from '../../auth/caller';
import type { KeyIdentifier } from '../../auth/identify-caller';
import { ApiError } from '../../errors';
import type { Admitter } from '../../limits/admit';

/** A WebSocket, or an SSE stream: closed with a code and the §6 code as its reason. */
export interface Closable {
  close(code: number, reason: string): void;
}

interface OpenSocket {
  caller: Caller;
  identity: string;
  rawKeys: string[];
}

export interface RecheckDeps {
  identify: KeyIdentifier;
  admitter: Admitter<Caller>;
  everyMs: number;
  bannedCode: (caller: Caller) => string;
  forbiddenClose: number;
}

/**
 * A key revoked, or an identity banned on any surface, while its sockets are open: they are
 * closed at the next check, every `everyMs`. One key look-up per distinct key and one ban look-up
 * per identity, however many sockets or streams hold them (a thousand streams of a hundred keys
 * would otherwise send a thousand look-ups to the database each time the key cache expires); a key
 * that cannot be checked now is left alone. Returns the timer, for shutdown.
 */
export function recheckKeys(sockets: ReadonlyMap<Closable, OpenSocket>, deps: RecheckDeps): NodeJS.Timeout {
  const timer = setInterval(() => {
    const byIdentity = new Map<string, [Closable, OpenSocket][]>();
    // An invalid key is invalid whatever the address it comes from: the first holder's stands for all.
    const byKey = new Map<string, { address: string; holders: Closable[] }>();
    for (const [socket, state] of sockets) {
      for (const rawKey of state.rawKeys) {
        const holding = byKey.get(rawKey);
        if (holding) holding.holders.push(socket);
        else byKey.set(rawKey, { address: state.caller.address, holders: [socket] });
      }
      const held = byIdentity.get(state.identity);
      if (held) held.push([socket, state]);
      else byIdentity.set(state.identity, [[socket, state]]);
    }
    for (const [rawKey, { address, holders }] of byKey) {
      Promise.resolve(deps.identify(address, [rawKey])).then(
        ({ unverified }) =>
          unverified instanceof ApiError && unverified.code === 'INVALID_API_KEY' && holders.forEach((socket) => socket.close(deps.forbiddenClose, 'INVALID_API_KEY')),
        () => undefined,
      );
    }
    for (const [identity, held] of byIdentity) {
      deps.admitter.bannedUntil(identity).then(
        (until) => until !== null && held.forEach(([socket, state]) => socket.close(deps.forbiddenClose, deps.bannedCode(state.caller))),
        () => undefined,
      );
    }
  }, deps.everyMs);
  timer.unref();
  return timer;
}
