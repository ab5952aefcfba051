import { readFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Where the offline explorer's page and files are served: every byte from this gateway. */
export const EXPLORER_PATH = '/graphql/explorer';

const JS = 'text/javascript; charset=utf-8';

/**
 * The prebuilt browser files the page loads, each shipped inside its npm package (pinned in
 * package.json): GraphiQL 3's UMD bundle and stylesheet, the React 18 UMD builds it runs on, and
 * graphql-sse's client for subscriptions. Nothing is bundled at build time.
 */
const ASSETS: Readonly<Record<string, { packageName: string; file: string; type: string }>> = {
  'graphiql.min.css': { packageName: 'graphiql', file: 'graphiql.min.css', type: 'text/css; charset=utf-8' },
  'graphiql.min.js': { packageName: 'graphiql', file: 'graphiql.min.js', type: JS },
  'react.production.min.js': { packageName: 'react', file: 'umd/react.production.min.js', type: JS },
  'react-dom.production.min.js': { packageName: 'react-dom', file: 'umd/react-dom.production.min.js', type: JS },
  'graphql-sse.min.js': { packageName: 'graphql-sse', file: 'umd/graphql-sse.min.js', type: JS },
};

export const ASSET_NAMES = Object.keys(ASSETS);

export interface ExplorerAsset {
  body: Buffer;
  type: string;
}

/** The asset of that name, read from its package once and kept; undefined for any other name. */
export function explorerAssets(): (name: string) => Promise<ExplorerAsset | undefined> {
  const loaded = new Map<string, Promise<ExplorerAsset>>();
  return (name) => {
    if (!Object.hasOwn(ASSETS, name)) return Promise.resolve(undefined);
    let asset = loaded.get(name);
    if (asset === undefined) {
      const { packageName, file, type } = ASSETS[name];
      const path = join(dirname(require.resolve(`${packageName}/package.json`)), file);
      asset = readFile(path).then((body) => ({ body, type }));
      // A failed read is tried again by the next request rather than remembered.
      asset.catch(() => loaded.delete(name));
      loaded.set(name, asset);
    }
    return asset;
  };
}
