import { FloodLog, type Logger } from '../../logger';
import type { SocketRefusal } from '../../limits/socket-admission';

/** Who a socket or stream turned away was: its address, and its identity once known. */
export type RefusedClient = { address: string; identity?: string };

/**
 * Notes a socket or stream turned away for a bound: counted in the metrics, and logged (who,
 * never what it sent) as a line per client and bound, then a count per interval.
 */
export function socketRefusalNotes(observe: (reason: SocketRefusal) => void, logger: Logger, message: string) {
  const floods = new FloodLog(logger);
  return (reason: SocketRefusal, who: RefusedClient) => {
    observe(reason);
    floods.warn(`${who.identity ?? who.address} ${reason}`, { reason, ...who }, message);
  };
}
