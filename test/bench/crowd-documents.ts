/**
 * What the `crowd` scenario sends (crowd.ts). A crowd member's document is one of two shapes,
 * repeated in as many aliases as the cost limit admits, each alias with a text of its own so that
 * no two share a statement:
 * - `count`: `pets(first: 1, filter: { nameContains: $s }) { totalCount }` with two letters, no
 *   trigram: its count scans every pet.
 * - `page`: `pets(first: 1, filter: { nameContains: $s }) { nodes { id } }` with three letters
 *   no name holds: a trigram, but a page of a text few names hold walks the primary key to its end.
 * The texts avoid the letters of the pets' names (`Pet 123`), so nothing matches and no count
 * stops early at its bound.
 */
export interface CrowdDocument {
  shape: 'count' | 'page';
  aliases: number;
}

const LETTERS = 'abcdfghijklmnoqrsuvwxyz';
const SELECTION = { count: '{ totalCount }', page: '{ nodes { id } }' } as const;
const LENGTH = { count: 2, page: 3 } as const;

export function crowdQuery({ shape, aliases }: CrowdDocument): string {
  const indices = Array.from({ length: aliases }, (_, i) => i);
  const variables = indices.map((i) => `$s${i}: String`).join(', ');
  const fields = indices.map((i) => `a${i}: pets(first: 1, filter: { nameContains: $s${i} }) ${SELECTION[shape]}`).join(' ');
  return `query Crowd(${variables}) { ${fields} }`;
}

const randomText = (length: number) => Array.from({ length }, () => LETTERS[Math.floor(Math.random() * LETTERS.length)]).join('');

/** The document with fresh texts, distinct across its aliases. */
export function crowdRequestBody(document: CrowdDocument): string {
  const texts = new Set<string>();
  while (texts.size < document.aliases) texts.add(randomText(LENGTH[document.shape]));
  const variables = Object.fromEntries([...texts].map((text, i) => [`s${i}`, text]));
  return JSON.stringify({ query: crowdQuery(document), variables });
}

const VICTIM = 'query Victim($id: ID!) { pet(id: $id) { name category { name } } }';

/** A paying client's read of one pet, chosen at random of `pets`. */
export const victimRequestBody = (pets: number) => JSON.stringify({ query: VICTIM, variables: { id: String(1 + Math.floor(Math.random() * pets)) } });
