/**
 * What one field of a change notification holds: an int64 id as decimal text, a count (an integer
 * from 0), or one of a few strings.
 */
export type FieldShape = 'id' | 'count' | readonly string[];

/**
 * A notification payload's fields. One shape is both the TypeScript type of a payload
 * (`NotificationOf`) and the check a received payload must pass (`fitsShape`), so the two cannot
 * drift apart; payloads built in SQL are held to it by a test.
 */
export type NotificationShape = Readonly<Record<string, FieldShape>>;

type ValueOf<F extends FieldShape> = F extends 'id' ? string : F extends 'count' ? number : F extends readonly (infer V)[] ? V : never;

export type NotificationOf<S extends NotificationShape> = { -readonly [K in keyof S]: ValueOf<S[K]> };

const DECIMAL = /^(0|[1-9][0-9]*)$/;

function fitsField(field: FieldShape, value: unknown): boolean {
  if (field === 'id') return typeof value === 'string' && DECIMAL.test(value);
  if (field === 'count') return Number.isInteger(value) && (value as number) >= 0;
  return typeof value === 'string' && field.includes(value);
}

/** Whether `value` is a payload of `shape`: every field present and well formed, and nothing else. */
export function fitsShape<S extends NotificationShape>(shape: S, value: unknown): value is NotificationOf<S> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const fields = Object.keys(shape);
  const record = value as Record<string, unknown>;
  return Object.keys(record).length === fields.length && fields.every((name) => Object.hasOwn(record, name) && fitsField(shape[name], record[name]));
}
