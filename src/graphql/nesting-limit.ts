import { GraphQLError, Lexer, Source, TokenKind } from 'graphql';
import { ApiError } from '../errors';

/**
 * The deepest nesting of braces and brackets (selection sets, input objects, lists, list types) a
 * document may have. graphql-js parses by recursion and overflows the stack a few thousand levels
 * down; field depth stops at 10 (docs/contract.md §6), so no document within the limits comes near.
 */
export const MAX_NESTING = 64;

/**
 * Whether `source` nests braces or brackets deeper than `max`, counted on graphql-js's tokens so
 * that strings and comments do not count. A document that does not lex is left to the parser.
 */
export function nestsDeeperThan(source: string, max: number): boolean {
  if (countOpenings(source) <= max) return false; // cannot nest deeper than it opens
  const lexer = new Lexer(new Source(source));
  let depth = 0;
  try {
    for (let token = lexer.advance(); token.kind !== TokenKind.EOF; token = lexer.advance()) {
      if (token.kind === TokenKind.BRACE_L || token.kind === TokenKind.BRACKET_L) {
        if (++depth > max) return true;
      } else if (token.kind === TokenKind.BRACE_R || token.kind === TokenKind.BRACKET_R) {
        depth--;
      }
    }
  } catch (error) {
    if (error instanceof GraphQLError) return false;
    throw error;
  }
  return false;
}

function countOpenings(source: string): number {
  let count = 0;
  for (let i = 0; i < source.length; i++) {
    const code = source.charCodeAt(i);
    if (code === 0x7b || code === 0x5b) count++; // { [
  }
  return count;
}

/** The refusal of a document nested deeper than MAX_NESTING, over HTTP and WebSocket alike. */
export function tooDeeplyNested(): ApiError {
  return new ApiError('QUERY_TOO_COMPLEX', `The document nests selections or values more than ${MAX_NESTING} deep`);
}
