import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { resolve } from 'node:path';
import { build } from 'esbuild';

/** The repository's root: the packages a shop's script imports are bundled from its node_modules. */
const ROOT = resolve(__dirname, '..', '..');

/** What the shop serves: its page at `/`, and the script the page loads at `/shop.js`. */
export interface ShopFront {
  html: string;
  script: string;
}

export interface Shop {
  /** http://127.0.0.1:<port>, another origin than the gateway's. */
  origin: string;
  server: Server;
  close(): Promise<void>;
}

/**
 * A shop front's script as a shop ships it: bundled with the packages it imports by esbuild, each
 * in its production browser build, as a shop's build step makes it.
 */
export async function shopScript(source: string): Promise<string> {
  const { outputFiles } = await build({
    stdin: { contents: source, resolveDir: ROOT, sourcefile: 'shop.js' },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    conditions: ['production'],
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    logLevel: 'silent',
  });
  return outputFiles[0].text;
}

/** A shop front's own origin, a static server on loopback: its page at `/` and its script at `/shop.js`. */
export async function startShop(front: () => ShopFront): Promise<Shop> {
  const server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://shop').pathname;
    if (path === '/') return res.writeHead(200, { 'Content-Type': 'text/html' }).end(front().html);
    if (path === '/shop.js') return res.writeHead(200, { 'Content-Type': 'text/javascript' }).end(front().script);
    res.writeHead(404).end();
  });
  await new Promise<void>((listening) => server.listen(0, '127.0.0.1', listening));
  return {
    origin: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    server,
    close: () => new Promise((closed) => server.close(() => closed())),
  };
}
