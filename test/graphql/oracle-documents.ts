/**
 * Documents generated from the schema for the oracle (oracle.cases.ts): from a seed, so that a
 * failing document is the same on every run. Each has up to two Boolean variables, used by
 * `@include`/`@skip` on fields, fragment spreads and inline fragments; fragments are spread more
 * than once under different conditions; ids, enums and page sizes come as literals or variables,
 * good and bad; some fields need an admin key the caller does not send, some raise errors inside
 * non-null fields.
 */
export interface OracleDocument {
  name: string;
  query: string;
  /** Values of the variables other than the Boolean ones: each set is sent with the whole truth table. */
  variableSets: Record<string, unknown>[];
  /** The Boolean variables, each given every value. */
  booleans: string[];
}

type Kind = 'Pet' | 'Category' | 'InventoryItem' | 'PetConnection' | 'CategoryConnection' | 'InventoryConnection' | 'PageInfo';

/** What each type offers the generator: leaves, and fields leading to another type (with arguments written by `args`). */
const FIELDS: Record<Kind, { leaves: string[]; objects: [field: string, type: Kind, args?: 'page'][] }> = {
  Pet: { leaves: ['id', 'name', 'status', 'categoryId', '__typename'], objects: [['category', 'Category'], ['inventory', 'InventoryItem']] },
  Category: { leaves: ['id', 'name', 'description'], objects: [['pets', 'PetConnection', 'page']] },
  InventoryItem: { leaves: ['petId', 'quantity', 'status'], objects: [['pet', 'Pet']] },
  PetConnection: { leaves: ['totalCount', 'totalCountPrecision'], objects: [['nodes', 'Pet'], ['pageInfo', 'PageInfo']] },
  CategoryConnection: { leaves: ['totalCount'], objects: [['nodes', 'Category'], ['pageInfo', 'PageInfo']] },
  InventoryConnection: { leaves: ['totalCount'], objects: [['nodes', 'InventoryItem']] },
  PageInfo: { leaves: ['hasNextPage', 'endCursor'], objects: [] },
};

/** A small deterministic generator (mulberry32). */
function random(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    chance: (p: number) => next() < p,
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
    int: (from: number, to: number) => from + Math.floor(next() * (to - from + 1)),
  };
}

/** One document in the making: its variables, fragments and a counter for unique aliases. */
class Builder {
  readonly variables = new Map<string, string>();
  readonly values: Record<string, unknown> = {};
  readonly badValues: Record<string, unknown> = {};
  readonly fragments = new Map<string, { type: Kind; text: string }>();
  private aliases = 0;
  private readonly booleans: string[];
  /** Fragments being written around the current selection. */
  private inFragments = 0;
  /** Whether a page size that its field refuses as it resolves (0, 101) has been written. */
  private refusedPage = false;

  constructor(
    readonly rng: ReturnType<typeof random>,
    petIds: string[],
  ) {
    this.booleans = ['a', 'b', 'c'].slice(0, rng.int(0, 2));
    for (const name of this.booleans) this.variables.set(name, 'Boolean!');
    this.petIds = petIds;
  }

  readonly petIds: string[];

  booleanNames(): string[] {
    return [...this.variables].filter(([, type]) => type === 'Boolean!' || type === 'Boolean').map(([name]) => name);
  }

  alias(): string {
    this.aliases += 1;
    return `x${this.aliases}`;
  }

  /** `@include`/`@skip` on a variable, a literal, or nothing. */
  condition(): string {
    const { rng } = this;
    if (!rng.chance(0.45)) return '';
    const directive = rng.pick(['include', 'skip']);
    const on = this.booleans.length && rng.chance(0.85) ? `$${rng.pick(this.booleans)}` : rng.pick(['true', 'false']);
    return ` @${directive}(if: ${on})`;
  }

  /** An argument's value: a literal, or a variable (good in one set of values, bad in the other). */
  value(type: string, literals: string[], good: unknown, bad: unknown): string {
    if (this.rng.chance(0.5)) return this.rng.pick(literals);
    const name = `v${this.variables.size}`;
    this.variables.set(name, type);
    this.values[name] = good;
    this.badValues[name] = bad;
    return `$${name}`;
  }

  id(): string {
    const id = this.rng.pick(this.petIds);
    return this.value('ID!', [`"${id}"`, `"0${id}"`, '"999999"', id], this.rng.pick([id, `0${id}`, Number(id), '999999']), this.rng.pick(['abc', null, -1, '']));
  }

  /**
   * A page's arguments. At most one page size of a document is refused as its field resolves (0 or
   * 101: the field's own check), and none in a fragment, which may be spread under several fields:
   * when several fields fail under non-null parents, graphql-js answers with the first failure to
   * settle, which over a pool of connections is not always the same one. Any other size is
   * refused as the variables are read, before execution, the same way every time.
   */
  page(filter: boolean): string {
    let first = this.value('Int', ['1', '2', '3', '0'], this.rng.int(1, 3), this.rng.pick([0, 101, 'x', 1.5]));
    const variable = first.startsWith('$') ? first.slice(1) : undefined;
    const refused = variable ? typeof this.badValues[variable] === 'number' : first === '0';
    if (refused && (this.refusedPage || this.inFragments > 0)) {
      if (variable) this.badValues[variable] = 'x';
      else first = '1';
    } else if (refused) this.refusedPage = true;
    const status = filter && this.rng.chance(0.3) ? `, filter: { status: ${this.value('PetStatus', ['AVAILABLE', 'SOLD'], this.rng.pick(['AVAILABLE', 'PENDING']), 'LOST')} }` : '';
    return `(first: ${first}${status})`;
  }

  /** A selection set of `type`, `depth` levels deep at most. */
  selection(type: Kind, depth: number): string {
    const { rng } = this;
    const parts: string[] = [];
    const { leaves, objects } = FIELDS[type];
    const count = rng.int(1, 4);
    for (let i = 0; i < count; i += 1) {
      const choice = rng.int(0, 9);
      if (choice < 4 || depth === 0 || objects.length === 0) {
        const leaf = rng.pick(leaves);
        parts.push(`${rng.chance(0.2) ? `${this.alias()}: ` : ''}${leaf}${this.condition()}`);
      } else if (choice < 7) {
        const [field, next, args] = rng.pick(objects);
        const written = args === 'page' ? `${this.alias()}: ${field}${this.page(false)}` : `${rng.chance(0.3) ? `${this.alias()}: ` : ''}${field}`;
        parts.push(`${written}${this.condition()} { ${this.selection(next, depth - 1)} }`);
      } else if (choice < 9) {
        parts.push(this.spread(type, depth));
      } else {
        const on = rng.chance(0.5) ? ` on ${type}` : '';
        parts.push(`...${on}${this.condition()} { ${this.selection(type, depth - 1)} }`);
      }
    }
    return parts.join(' ');
  }

  /** A spread of a fragment on `type`: one already defined (spread again, under other conditions) or a new one. */
  spread(type: Kind, depth: number): string {
    // A fragment still being written (no text yet) is left out: spreading it would make a cycle.
    const known = [...this.fragments].filter(([, fragment]) => fragment.type === type && fragment.text).map(([name]) => name);
    let name: string;
    if (known.length && this.rng.chance(0.6)) name = this.rng.pick(known);
    else {
      name = `F${this.fragments.size}`;
      // Reserved first, so that a nested spread of the same type cannot name itself.
      this.fragments.set(name, { type, text: '' });
      this.inFragments += 1;
      const selection = this.selection(type, Math.max(0, depth - 1));
      this.inFragments -= 1;
      this.fragments.set(name, { type, text: `fragment ${name} on ${type} { ${selection} }` });
    }
    return `...${name}${this.condition()}`;
  }
}

/** What a root field may be, as a client key sees it. */
function rootField(builder: Builder): string {
  const { rng } = builder;
  const alias = `${builder.alias()}: `;
  const cond = () => builder.condition();
  switch (rng.int(0, 7)) {
    case 0:
    case 1:
      return `${alias}pet(id: ${builder.id()})${cond()} { ${builder.selection('Pet', 2)} }`;
    case 2:
      return `${alias}pets${builder.page(true)}${cond()} { ${builder.selection('PetConnection', 2)} }`;
    case 3:
      return `${alias}category(id: "1")${cond()} { ${builder.selection('Category', 2)} }`;
    case 4:
      return `${alias}categories(first: 2)${cond()} { ${builder.selection('CategoryConnection', 2)} }`;
    case 5:
      return `${alias}inventoryItem(petId: ${builder.id()})${cond()} { ${builder.selection('InventoryItem', 2)} }`;
    case 6:
      return `${alias}inventory(first: 2)${cond()} { ${builder.selection('InventoryConnection', 2)} }`;
    default:
      // Another client's order (null), or what only an admin may read: an error, and for a non-null connection a null data.
      return rng.chance(0.5) ? `${alias}order(id: "1")${cond()} { id quantity }` : `${alias}apiKeys(first: 1)${cond()} { totalCount }`;
  }
}

/**
 * `count` documents from `seed`, over the pets `petIds` (existing ones), `perOperation` of them
 * sent as one operation: their aliases, fragments and variables are apart, their Boolean
 * variables shared, so the truth table stays small while the operation answers for them all.
 */
export function generateDocuments(count: number, seed: number, petIds: string[], perOperation = 8): OracleDocument[] {
  const rng = random(seed);
  const operations: OracleDocument[] = [];
  for (let first = 0; first < count; first += perOperation) {
    const builder = new Builder(rng, petIds);
    const roots: string[] = [];
    for (let n = first; n < Math.min(count, first + perOperation); n += 1) {
      roots.push(...Array.from({ length: rng.int(1, 2) }, () => rootField(builder)));
      // The same fragment under an included and an excluded alias.
      if (rng.chance(0.2)) {
        const spread = builder.spread('Pet', 2).replace(/ @.*$/, '');
        const id = builder.petIds[0];
        roots.push(`${builder.alias()}: pet(id: "${id}") @include(if: true) { ${spread} }`, `${builder.alias()}: pet(id: "${id}") @skip(if: true) { ${spread} }`);
      }
    }
    const fragments = () => [...builder.fragments.values()].map(({ text }) => text);
    // Every Boolean variable used at least once, as validation requires.
    for (const name of builder.booleanNames()) if (![...roots, ...fragments()].some((text) => text.includes(`$${name})`))) roots.push(`${builder.alias()}: __typename @skip(if: $${name})`);
    const definitions = [...builder.variables].map(([name, type]) => `$${name}: ${type}`);
    const name = `G${first}`;
    const header = definitions.length ? `query ${name}(${definitions.join(', ')})` : `query ${name}`;
    const hasValues = Object.keys(builder.values).length > 0;
    operations.push({
      name: `generated documents #${first} to #${Math.min(count, first + perOperation) - 1}`,
      query: [`${header} { ${roots.join(' ')} }`, ...fragments()].join(' '),
      booleans: builder.booleanNames(),
      // Bad values for one operation in three: each refused before anything runs, all at once.
      variableSets: hasValues ? (rng.chance(0.34) ? [builder.values, builder.badValues] : [builder.values]) : [{}],
    });
  }
  return operations;
}
