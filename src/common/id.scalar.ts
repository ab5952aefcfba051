import { GraphQLScalarType, Kind } from 'graphql';
import { badInput } from '../errors';

const MAX_INT64 = 9223372036854775807n;
const DECIMAL = /^[0-9]{1,19}$/;

/** The canonical id for `value` when it is an int64 from 1 up, else undefined. */
export function toId(value: unknown): string | undefined {
  const text = typeof value === 'number' && Number.isSafeInteger(value) ? String(value) : value;
  if (typeof text !== 'string' || !DECIMAL.test(text)) return undefined;
  const id = BigInt(text);
  return id >= 1n && id <= MAX_INT64 ? id.toString() : undefined;
}

/**
 * Parses an int64 id (1..9223372036854775807) written as decimal digits.
 * Ids stay strings inside the gateway: PostgreSQL `bigint` exceeds a JavaScript number.
 */
export function parseId(value: unknown, what = 'id'): string {
  const id = toId(value);
  if (id !== undefined) return id;
  const shown = typeof value === 'string' ? JSON.stringify(value.slice(0, 40)) : String(value);
  throw badInput(`Expected ${what} to be a decimal integer from 1 to ${MAX_INT64}, got ${shown}`);
}

/**
 * The schema's `ID`: the standard scalar, narrowed to int64 ids so that a malformed id is
 * refused before execution as BAD_USER_INPUT instead of reaching the database.
 */
export const Int64ID = new GraphQLScalarType<string, string>({
  name: 'ID',
  description: 'A 64-bit integer identifier from 1 to 9223372036854775807, sent as a decimal string.',
  serialize: (value) => String(value),
  parseValue: (value) => parseId(value),
  parseLiteral: (ast) => {
    if (ast.kind === Kind.STRING || ast.kind === Kind.INT) return parseId(ast.value);
    throw badInput(`Expected id to be a decimal integer string, got a ${ast.kind.toLowerCase()} literal`);
  },
});
