/** A value written into an inline script: JSON, with `<` escaped so that no text can close the script. */
export const inline = (value: unknown): string => JSON.stringify(value).replace(/</g, '\\u003c');
