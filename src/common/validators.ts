import { ValidateBy, ValidateIf, ValidationOptions } from 'class-validator';
import { isCursor } from './cursor';

/** Validate the field only when the client sent it; an explicit null is still checked. */
export const WhenPresent = () => ValidateIf((_object, value) => value !== undefined);

/** Refuses an explicit null, for update fields that may be left out but not cleared. */
export function NotNull(options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'notNull',
      validator: {
        validate: (value: unknown) => value !== null,
        defaultMessage: (args) => `${args?.property} cannot be null`,
      },
    },
    options,
  );
}

/**
 * White space, control and invisible format characters (Unicode Cf: U+200B, U+200D, U+2060, U+FEFF, …)
 * at either end of a text: none of them shows, so a name made only of them is empty.
 */
const INVISIBLE_ENDS = /^[\s\p{Cc}\p{Cf}]+|[\s\p{Cc}\p{Cf}]+$/gu;

/** A name as it is counted and stored (docs/contract.md §3): without what does not show at its ends. */
export const trimName = (text: string): string => text.replace(INVISIBLE_ENDS, '');

/**
 * Names are bounded after trimming (docs/contract.md §3): "  " and "\u200b\u200b" are empty, not two
 * characters. What is left starts and ends with a visible character.
 */
export function TrimmedLength(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'trimmedLength',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = [...trimName(value)].length;
          return length >= min && length <= max;
        },
        defaultMessage: (args) => `${args?.property} must be ${min} to ${max} characters after trimming`,
      },
    },
    options,
  );
}

/** A page size from 1 to `max`: one message, whatever is wrong with the value (null included). */
export function PageSize(max: number): PropertyDecorator {
  return ValidateBy({
    name: 'pageSize',
    validator: {
      validate: (value: unknown) => Number.isInteger(value) && (value as number) >= 1 && (value as number) <= max,
      defaultMessage: (args) => {
        const value: unknown = args?.value;
        if (typeof value === 'number' && value < 1) return `${args?.property} must be at least 1`;
        if (typeof value === 'number' && value > max) return `${args?.property} must be at most ${max}`;
        return `${args?.property} must be a number from 1 to ${max}, got ${JSON.stringify(value)}`;
      },
    },
  });
}

/** A cursor from a previous page, checked with the arguments: refused whatever the query selects. */
export function Cursor(): PropertyDecorator {
  return ValidateBy({
    name: 'cursor',
    validator: {
      validate: (value: unknown) => value === null || value === undefined || (typeof value === 'string' && isCursor(value)),
      defaultMessage: (args) => `Expected ${args?.property} to be a cursor from a previous page, got ${JSON.stringify(String(args?.value).slice(0, 40))}`,
    },
  });
}
