import { badInput } from '../errors';
import { toId } from './id.scalar';

const PREFIX = 'id:';

/** Cursors are opaque to clients; inside they carry the id the next page starts after. */
export function encodeCursor(id: string): string {
  return Buffer.from(PREFIX + id).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith(PREFIX) ? toId(text.slice(PREFIX.length)) : undefined;
  // Re-encoding rejects the many strings that base64url decoding would quietly accept.
  if (id === undefined || encodeCursor(id) !== cursor) {
    throw badInput(`Expected after to be a cursor from a previous page, got ${JSON.stringify(cursor.slice(0, 40))}`);
  }
  return id;
}
