import type { Client } from 'pg';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey } from '../helpers/builders';
import { loadCatalogue } from '../helpers/catalogue';
import { printFigure } from '../helpers/figures';
import { gql } from '../helpers/gql';
import { withPostgres } from '../helpers/services';
import { withClientQuery } from '../helpers/statements';

/**
 * Every filter shape the schema offers, on a catalogue of 100,000 pets: the plan PostgreSQL runs
 * for each of its statements (EXPLAIN ANALYZE), and whether an index serves it or it scans.
 */
withPostgres('filter plans at 100,000 pets', () => {
  const PETS = 100_000;
  /** A table read past this share of its rows is scanned, whatever the node is called. */
  const SCANNED_SHARE = 0.5;

  const LIST_VIEW_LABEL = 'docs/api.md list view of 100';
  const LIST_VIEW =
    '{ pets(first: 100) { nodes { id name status category { id name description } inventory { petId quantity status } } pageInfo { hasNextPage endCursor } totalCount } }';
  const PETS_SHAPE = 'query($f: PetFilter) { pets(first: 1, filter: $f) { nodes { id } totalCount } }';
  // A text with no trigram costs a scan a statement: its page and its count do not fit one document.
  const PETS_PAGE = 'query($f: PetFilter) { pets(first: 1, filter: $f) { nodes { id } } }';
  const PETS_COUNT = 'query($f: PetFilter) { pets(first: 1, filter: $f) { totalCount } }';
  const ORDERS_SHAPE = 'query($f: OrderFilter) { orders(first: 1, filter: $f) { nodes { id } totalCount } }';
  const INVENTORY_SHAPE = 'query($f: InventoryFilter) { inventory(first: 1, filter: $f) { nodes { petId } totalCount } }';

  let t: TestApp;
  let categories: string[];
  const query = <T>(sql: string, values?: unknown[]): Promise<T[]> => t.db.dataSource.query(sql, values);

  beforeAll(async () => {
    t = await startTestApp({}, { limitInFlight: false });
    const buyer = await createApiKey(t, { plan: 'PRO' });
    categories = await loadCatalogue(query, PETS, [buyer.id]);
  });
  afterAll(() => t?.close());

  /** Each shape, with whether an index serves every statement of it. */
  const shapes = (): { label: string; document: string; filter?: Record<string, unknown>; indexed: boolean }[] => {
    const pets = (label: string, filter: Record<string, unknown>, indexed: boolean, document = PETS_SHAPE) => ({ label: `pets ${label}`, document, filter, indexed });
    const short = (label: string, filter: Record<string, unknown>, indexed: boolean) => [
      pets(`${label}, page`, filter, indexed, PETS_PAGE),
      pets(`${label}, count`, filter, indexed, PETS_COUNT),
    ];
    return [
      { label: LIST_VIEW_LABEL, document: LIST_VIEW, indexed: true },
      pets('no filter', {}, true),
      pets('status', { status: 'SOLD' }, true),
      pets('category', { categoryId: categories[2] }, true),
      pets('status + category', { status: 'PENDING', categoryId: categories[3] }, true),
      pets('category with no pets', { categoryId: categories[6] }, true),
      ...short('nameContains of 1 character', { nameContains: 'q' }, false),
      ...short('nameContains of 2 characters', { nameContains: 'qz' }, false),
      ...short('nameContains of 2 characters, common', { nameContains: 'et' }, true),
      pets('nameContains of 3 characters', { nameContains: 'qzx' }, false),
      pets('nameContains of 3 characters, common', { nameContains: 'Pet' }, true),
      pets('nameContains of 8 characters', { nameContains: 'Pet 9999' }, false),
      ...short('nameContains of 3 non-letters', { nameContains: '%%%' }, false),
      ...short('nameContains of 2 characters + status', { nameContains: 'qz', status: 'SOLD' }, true),
      ...short('nameContains of 2 characters + category', { nameContains: 'qz', categoryId: categories[2] }, true),
      pets('nameContains of 3 characters + status + category', { nameContains: 'qzx', status: 'SOLD', categoryId: categories[2] }, true),
      { label: 'orders no filter', document: ORDERS_SHAPE, filter: {}, indexed: false },
      { label: 'orders complete', document: ORDERS_SHAPE, filter: { complete: true }, indexed: false },
      { label: 'orders of a pet', document: ORDERS_SHAPE, filter: { petId: '5' }, indexed: true },
      { label: 'orders of a pet, open', document: ORDERS_SHAPE, filter: { petId: '5', complete: false }, indexed: true },
      { label: 'inventory no filter', document: INVENTORY_SHAPE, filter: {}, indexed: true },
      { label: 'inventory status', document: INVENTORY_SHAPE, filter: { status: 'SOLD' }, indexed: true },
    ];
  };

  it('shows which filter shapes an index serves and which scan: a substring filter, and a count of every order', async () => {
    const rows: Row[] = [];
    for (const shape of shapes()) rows.push(await measure(shape.label, shape.document, shape.filter));
    printFigure(table(rows));
    expect(Object.fromEntries(rows.map((row) => [row.label, row.scanned.length === 0]))).toEqual(Object.fromEntries(shapes().map((shape) => [shape.label, shape.indexed])));
  });

  interface Row {
    label: string;
    cost: number;
    /** Execution time of its statements under EXPLAIN ANALYZE. */
    ms: number;
    /** Rows read from each table (returned plus filtered out), over every statement. */
    read: Record<string, number>;
    /** The tables read past SCANNED_SHARE of their rows, with the plan node that read them. */
    scanned: string[];
    access: string[];
  }

  /** The document's statements as the gateway sends them, each run by EXPLAIN ANALYZE; its cost from the response. */
  async function measure(label: string, document: string, filter?: Record<string, unknown>): Promise<Row> {
    const statements: { text: string; values?: unknown[] }[] = [];
    let cost = 0;
    await withClientQuery(
      (original) =>
        function (this: Client, ...args: unknown[]) {
          const [config, values] = args as [string | { text: string; values?: unknown[] }, unknown[] | undefined];
          const statement = typeof config === 'string' ? { text: config, values } : { text: config.text, values: config.values };
          if (/^\s*SELECT\b/i.test(statement.text) && /\b(pets|orders|inventory_items|pet_counts)\b/.test(statement.text)) statements.push(statement);
          return original.apply(this, args);
        },
      async () => {
        const result = await gql(t.url, document, filter === undefined ? undefined : { f: filter }, { key: t.adminKey });
        expect(result.errors).toBeUndefined();
        cost = result.body.extensions.cost.requested;
      },
    );
    const sizes = await tableSizes();
    const read: Record<string, number> = {};
    const access = new Set<string>();
    let ms = 0;
    for (const { text, values } of statements) {
      const [{ 'QUERY PLAN': [plan] }] = await query<{ 'QUERY PLAN': [{ Plan: PlanNode; 'Execution Time': number }] }>(`EXPLAIN (ANALYZE, FORMAT JSON) ${text}`, values);
      ms += plan['Execution Time'];
      for (const node of nodesOf(plan.Plan)) {
        if (!node['Relation Name'] || !(node['Relation Name'] in sizes)) continue;
        const rowsRead = (node['Actual Rows'] + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * node['Actual Loops'];
        read[node['Relation Name']] = (read[node['Relation Name']] ?? 0) + rowsRead;
        access.add(`${node['Node Type']}${node['Index Name'] ? ` ${node['Index Name']}` : ''} on ${node['Relation Name']}`);
      }
    }
    const scanned = Object.entries(read)
      .filter(([table, rowsRead]) => rowsRead > SCANNED_SHARE * sizes[table])
      .map(([table]) => table);
    return { label, cost, ms, read, scanned, access: [...access] };
  }

  async function tableSizes(): Promise<Record<string, number>> {
    const counted = await query<{ pets: number; orders: number; inventory: number }>(
      'SELECT (SELECT count(*) FROM pets)::int AS pets, (SELECT count(*) FROM orders)::int AS orders, (SELECT count(*) FROM inventory_items)::int AS inventory',
    );
    return { pets: counted[0].pets, orders: counted[0].orders, inventory_items: counted[0].inventory };
  }
});

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Actual Rows': number;
  'Actual Loops': number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

function table(rows: { label: string; cost: number; ms: number; read: Record<string, number>; scanned: string[]; access: string[] }[]): string {
  const lines = ['| shape | plan | rows read | scans | cost | database ms |', '|---|---|---:|---|---:|---:|'];
  for (const row of rows) {
    const read = Object.entries(row.read)
      .map(([name, count]) => `${name} ${count}`)
      .join(', ');
    lines.push(`| ${row.label} | ${row.access.join('; ')} | ${read} | ${row.scanned.join(', ') || 'no'} | ${row.cost} | ${row.ms.toFixed(2)} |`);
  }
  return lines.join('\n');
}
