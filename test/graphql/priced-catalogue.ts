import { seedDemoCatalogue } from '../../src/db/seed';
import { crowdQuery } from '../bench/crowd-documents';
import { startTestApp, type TestApp } from '../helpers/app';
import { codes, gql } from '../helpers/gql';

/**
 * A substring filter is priced by the catalogue it reads (docs/contract.md §5): a search box on the
 * demo catalogue costs little, the same document on 100,000 pets is priced as the scan it is.
 * The gateway reads the catalogue's size a few seconds at a time; each step here reads it at once.
 * Shared by scan-pricing.cases.ts (the demo catalogue) and scan-pricing-at-scale.slow.cases.ts.
 */
export const SEARCH_BOX = '{ pets(first: 10, filter: { nameContains: "a" }) { nodes { id name } totalCount } }';
export const NAME_SEARCH = '{ pets(first: 10, filter: { nameContains: "rex" }) { nodes { id name } totalCount } }';
export const CROWD_COUNT = crowdQuery({ shape: 'count', aliases: 1 });
export const CROWD_PAGE = crowdQuery({ shape: 'page', aliases: 1 });

/** Pets a statement adds: embedded, a statement of more would outlast the statement timeout (the name index is kept row by row). */
const PETS_A_STATEMENT = 10_000;

export interface PricedCatalogue {
  /** The app on the demo catalogue (set once the file's hooks ran). */
  readonly t: TestApp;
  petCount(): Promise<number>;
  /** Adds pets by SQL up to `total`, and has the gateway read the catalogue's size now rather than within its few seconds. */
  growTo(total: number): Promise<void>;
  /** The requested cost the gateway reports for `query` (with `variables`), refused or not, and how long its answer took. */
  priceOf(query: string, variables?: Record<string, unknown>): Promise<{ requested: number; ms: number; codes: string[] }>;
}

/** Registers the calling file's hooks: an app on the demo catalogue, closed after the file. */
export function usePricedCatalogue(): PricedCatalogue {
  let t: TestApp;
  let categoryId: string;
  beforeAll(async () => {
    t = await startTestApp();
    await seedDemoCatalogue(t.db.dataSource);
    [{ id: categoryId }] = await t.db.dataSource.query('SELECT id FROM categories ORDER BY id LIMIT 1');
  });
  afterAll(() => t.close());

  const petCount = async () => (await t.db.dataSource.query('SELECT count(*)::int AS n FROM pets'))[0].n as number;
  return {
    get t() {
      return t;
    },
    petCount,
    async growTo(total) {
      for (let more = total - (await petCount()); more > 0; more -= PETS_A_STATEMENT) {
        const rows = Math.min(more, PETS_A_STATEMENT);
        await t.db.dataSource.query(`INSERT INTO pets (name, category_id, status) SELECT 'Pet ' || i, $1, 'available' FROM generate_series(1, $2) i`, [categoryId, rows]);
      }
      expect(await t.app.services.database.catalogueSize.refresh()).toBe(total);
    },
    async priceOf(query, variables) {
      const started = performance.now();
      const result = await gql(t.url, query, variables, { key: t.adminKey });
      return { requested: result.body.extensions.cost.requested, ms: Math.round(performance.now() - started), codes: codes(result) };
    },
  };
}
