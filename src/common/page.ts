import { decodeCursor } from './cursor';

/** A page request: at most `first` rows after the row with id `afterId`. */
export interface PageRequest {
  first: number;
  afterId?: string;
}

export interface Page<T> {
  rows: T[];
  hasNextPage: boolean;
}

export function pageRequest(args: { first: number; after?: string | null }): PageRequest {
  return { first: args.first, afterId: args.after == null ? undefined : decodeCursor(args.after) };
}

/** Rows are fetched with LIMIT first + 1: the extra row only says that another page exists. */
export function toPage<T>(rows: T[], first: number): Page<T> {
  return { rows: rows.slice(0, first), hasNextPage: rows.length > first };
}
