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

/** Names are bounded after trimming (docs/contract.md §3): "  " is empty, not two characters. */
export function TrimmedLength(min: number, max: number, options?: ValidationOptions): PropertyDecorator {
  return ValidateBy(
    {
      name: 'trimmedLength',
      validator: {
        validate: (value: unknown) => {
          if (typeof value !== 'string') return false;
          const length = [...value.trim()].length;
          return length >= min && length <= max;
        },
        defaultMessage: (args) => `${args?.property} must be ${min} to ${max} characters after trimming`,
      },
    },
    options,
  );
}
