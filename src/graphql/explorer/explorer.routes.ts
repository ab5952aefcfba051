import type { Explorer } from '../../config';
import { methodNotAllowed, noResource } from '../../refusals';
import { EXPLORER_PATH, explorerAssets } from './explorer-assets';
import { graphiqlPage } from './graphiql-page';
import { explorerOffPage } from './off-page';

export type ExplorerAnswer = { status: number; type: string; body: string | Buffer; cacheControl: string };

const HTML = 'text/html; charset=utf-8';
/** The files are those of the pinned packages: a browser may keep them for a day. */
const ASSET_CACHE = 'public, max-age=86400';

/**
 * The offline explorer at /graphql/explorer and its files below it, served outside CORS and the
 * limiter like the operations routes: a page and its files are not API calls. Where the explorer
 * is off, the page says so (404) and no file is served.
 */
export function explorerRoutes(explorer: Explorer) {
  const asset = explorerAssets();
  const on = explorer !== 'off';
  return {
    /** The route's metrics label (`page` or the file's name), or undefined for a path not the explorer's. */
    match(path: string): string | undefined {
      if (path === EXPLORER_PATH || path === `${EXPLORER_PATH}/`) return 'page';
      return path.startsWith(`${EXPLORER_PATH}/`) ? path.slice(EXPLORER_PATH.length + 1) : undefined;
    },
    async answer(route: string, method: string, path: string): Promise<ExplorerAnswer> {
      if (method !== 'GET' && method !== 'HEAD') {
        throw methodNotAllowed(method, path.slice(0, 200), ['GET', 'HEAD']);
      }
      if (route === 'page') {
        return on
          ? { status: 200, type: HTML, body: graphiqlPage(), cacheControl: 'no-cache' }
          : { status: 404, type: HTML, body: explorerOffPage(), cacheControl: 'no-cache' };
      }
      const found = on ? await asset(route) : undefined;
      if (!found) throw noResource(method, path);
      return { status: 200, type: found.type, body: found.body, cacheControl: ASSET_CACHE };
    },
  };
}
