import { readFile, stat } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, relative, resolve, sep } from 'node:path';

/** The repository's root: the packages a shop page imports are served from its node_modules. */
export const ROOT = resolve(__dirname, '..', '..');

export interface Shop {
  /** http://127.0.0.1:<port>, another origin than the gateway's. */
  origin: string;
  server: Server;
  close(): Promise<void>;
}

/** The file a bundler would take for an import written without its extension (rxjs's ES modules are). */
async function moduleFile(file: string): Promise<string | undefined> {
  for (const candidate of [file, `${file}.js`, join(file, 'index.js')]) {
    if ((await stat(candidate).catch(() => undefined))?.isFile()) return candidate;
  }
  return undefined;
}

/**
 * A shop front's own origin, a static server on loopback: its page at `/`, and the packages' files
 * from node_modules as a development server serves them (an import without an extension
 * redirected to its file, so that the file's relative imports resolve from where it is).
 */
export async function startShop(page: () => string): Promise<Shop> {
  const server = createServer((req, res) => {
    void (async () => {
      const path = decodeURIComponent(new URL(req.url ?? '/', 'http://shop').pathname);
      if (path === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(page());
      const requested = resolve(ROOT, `.${path}`);
      const file = requested.startsWith(join(ROOT, 'node_modules') + sep) ? await moduleFile(requested) : undefined;
      if (file === undefined) return res.writeHead(404).end();
      if (file !== requested) return res.writeHead(302, { Location: `/${relative(ROOT, file).split(sep).join('/')}` }).end();
      res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(await readFile(file));
    })().catch(() => res.writeHead(500).end());
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}
