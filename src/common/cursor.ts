import { badInput } from '../errors';
import { toId } from './id.scalar';

const PREFIX = 'id:';

/** Cursors are opaque to clients; inside they carry the id the next page starts after. */
export function encodeCursor(id: string): string {
  return Buffer.from(PREFIX + id).toString('base64url');
}

export function decodeCursor(cursor: string): string {
  const id = idOf(cursor);
  if (id === undefined) throw badInput(`Expected after to be a cursor from a previous page, got ${JSON.stringify(cursor.slice(0, 40))}`);
  return id;
}

/** Whether `cursor` is one encodeCursor made. */
export function isCursor(cursor: string): boolean {
  return idOf(cursor) !== undefined;
}

function idOf(cursor: string): string | undefined {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  const id = text.startsWith(PREFIX) ? toId(text.slice(PREFIX.length)) : undefined;
  // Re-encoding rejects the many strings that base64url decoding would quietly accept.
  return id !== undefined && encodeCursor(id) === cursor ? id : undefined;
}
