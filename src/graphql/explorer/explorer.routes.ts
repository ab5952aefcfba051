import type { Explorer } from '../../config';
import { preferredType } from '../../http/media-types';
import { methodNotAllowed, noResource } from '../../refusals';
import { EXPLORER_PATH, explorerAssets } from './explorer-assets';
import { graphiqlPage } from './graphiql-page';
import { explorerOffPage } from './off-page';
import { sandboxPage } from './sandbox-page';

export type ExplorerAnswer = { status: number; type: string; body: string | Buffer; cacheControl: string };

const HTML = 'text/html; charset=utf-8';
/** The files are those of the pinned packages: a browser may keep them for a day. */
const ASSET_CACHE = 'public, max-age=86400';
/** What /graphql answers in, JSON first as Apollo Server orders them: `*∕*` is a client's, not a browser's. */
const GRAPHQL_OR_PAGE = ['application/json', 'application/graphql-response+json', 'text/html'];

/**
 * The explorer's pages and files, served outside CORS and the limiter like the operations routes:
 * a page and its files are not API calls, and a banned or limited browser still gets them (its
 * queries are what count, docs/contract.md §8). The landing page is what a browser gets at
 * /graphql, by GRAPHQL_EXPLORER: Apollo Sandbox, GraphiQL, or a word that the explorer is off.
 * The offline explorer is GraphiQL at /graphql/explorer with its files below it; where the
 * explorer is off, that page says so (404) and no file is served.
 */
export function explorerRoutes(explorer: Explorer) {
  const asset = explorerAssets();
  const on = explorer !== 'off';
  const graphiql = on ? graphiqlPage() : explorerOffPage();
  const landing = explorer === 'sandbox' ? sandboxPage() : graphiql;
  return {
    /** The route's metrics label (`page` or the file's name), or undefined for a path not the explorer's. */
    match(path: string): string | undefined {
      if (path === EXPLORER_PATH || path === `${EXPLORER_PATH}/`) return 'page';
      return path.startsWith(`${EXPLORER_PATH}/`) ? path.slice(EXPLORER_PATH.length + 1) : undefined;
    },
    /** A browser opening /graphql: a GET preferring HTML to GraphQL's JSON, as Apollo Server tells its landing page's. */
    wantsLanding(method: string | undefined, accept: string | undefined): boolean {
      return method === 'GET' && accept !== undefined && preferredType(accept, GRAPHQL_OR_PAGE) === 'text/html';
    },
    landing(): ExplorerAnswer {
      return { status: 200, type: HTML, body: landing, cacheControl: 'no-cache' };
    },
    async answer(route: string, method: string, path: string): Promise<ExplorerAnswer> {
      if (method !== 'GET' && method !== 'HEAD') {
        throw methodNotAllowed(method, path.slice(0, 200), ['GET', 'HEAD']);
      }
      if (route === 'page') return { status: on ? 200 : 404, type: HTML, body: graphiql, cacheControl: 'no-cache' };
      const found = on ? await asset(route) : undefined;
      if (!found) throw noResource(method, path);
      return { status: 200, type: found.type, body: found.body, cacheControl: ASSET_CACHE };
    },
  };
}
