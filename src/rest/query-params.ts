import type { ParsedUrlQuery } from 'node:querystring';
import { toId } from '../common/id.scalar';
import { badInput } from '../errors';

/** One value of a query parameter; a repeated parameter is ambiguous, hence refused. */
function single(query: ParsedUrlQuery, name: string): string | undefined {
  const value = query[name];
  if (value === undefined || typeof value === 'string') return value;
  throw badInput(`${name}: expected a single value`);
}

export function booleanParam(query: ParsedUrlQuery, name: string): boolean | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  if (raw === 'true' || raw === 'false') return raw === 'true';
  throw badInput(`${name}: expected true or false, got ${JSON.stringify(raw.slice(0, 40))}`);
}

export function integerParam(query: ParsedUrlQuery, name: string, { min, max, fallback }: { min: number; max: number; fallback: number }): number {
  const raw = single(query, name);
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!/^\d{1,10}$/.test(raw) || value < min || value > max) {
    throw badInput(`${name}: expected an integer from ${min} to ${max}, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return value;
}

export function idParam(query: ParsedUrlQuery, name: string): string | undefined {
  const raw = single(query, name);
  if (raw === undefined) return undefined;
  const id = toId(raw);
  if (id === undefined) {
    throw badInput(`${name}: expected an integer from 1 to 9223372036854775807, got ${JSON.stringify(raw.slice(0, 40))}`);
  }
  return id;
}
