import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { seedDemoCatalogue } from '../src/db/seed';
import { startTestApp, type TestApp } from './helpers/app';

/**
 * The README's command-line examples, pasted as a newcomer would: into a shell, against a gateway
 * with the demo catalogue, with only the admin key exported first, as the README asks.
 */
const README = readFileSync(join(__dirname, '..', 'README.md'), 'utf8');
const shellBlocks = [...README.matchAll(/```sh\n([\s\S]*?)```/g)].map((match) => match[1]);
const blockWith = (text: string) => {
  const block = shellBlocks.find((candidate) => candidate.includes(text));
  expect(block).toBeDefined();
  return block as string;
};

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
  await seedDemoCatalogue(t.db.dataSource);
});
afterAll(() => t.close());

it('runs the curl examples as written: a client key, an order, and that order over REST', async () => {
  const commandLine = blockWith('export ADMIN_KEY=');
  const orders = blockWith('/store/orders');
  // The one line the reader fills in: the key the gateway printed.
  const script = [commandLine.replace(/^export ADMIN_KEY=.*$/m, ''), 'echo', orders]
    .join('\n')
    .replaceAll('http://127.0.0.1:4000', t.url);
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', script], {
    env: { ...process.env, ADMIN_KEY: t.adminKey },
  });
  expect(stdout).toContain('"name":"Rex"');
  expect(stdout).toMatch(/"placeOrder":\{"id":"\d+","quantity":2\}/);
  expect(stdout).toMatch(/^X-Total-Count: 1\r?$/m);
  expect(stdout).toMatch(/^\[\{"id":\d+,"petId":1,"quantity":2,"shipDate":"2027-01-02T03:04:05.000Z","complete":false\}\]$/m);
});
