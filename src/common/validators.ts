import { ValidateBy, ValidateIf, ValidationOptions } from 'class-validator';

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
