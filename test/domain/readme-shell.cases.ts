import { execFile, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { seedDemoCatalogue } from '../../src/db/seed';
import { startTestApp, type TestApp } from '../helpers/app';
import { fencedBlocks, readDocument } from '../helpers/docs';
import { subscribed } from '../helpers/live';

/**
 * The README's command-line tour, pasted as a newcomer would: into a shell, against a gateway
 * with the demo catalogue, with only the admin key exported first, as the README asks. The blocks
 * are looked for in the README and the guides, wherever they live.
 */
const shellBlocks = fencedBlocks('sh');
const blockWith = (text: string) => {
  const block = shellBlocks.find((candidate) => candidate.text.includes(text));
  expect(block).toBeDefined();
  return (block as { text: string }).text;
};

let t: TestApp;
const inShell = (script: string) => script.replaceAll('http://127.0.0.1:4000', t.url);
const shellEnv = () => ({ ...process.env, ADMIN_KEY: t.adminKey });

beforeAll(async () => {
  t = await startTestApp();
  await seedDemoCatalogue(t.db.dataSource);
});
afterAll(() => t.close());

it('runs the curl examples as written: a client key, an order, the deprecated pet path and that order over REST', async () => {
  const commandLine = blockWith('export ADMIN_KEY=');
  // The one line the reader fills in: the key the gateway printed.
  const script = [commandLine.replace(/^export ADMIN_KEY=.*$/m, ''), 'echo', blockWith('/pets/1'), 'echo', blockWith('/store/orders')].join('\n');
  const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', inShell(script)], { env: shellEnv() });
  expect(stdout).toContain('"name":"Rex"');
  expect(stdout).toMatch(/"placeOrder":\{"id":"\d+","quantity":2\}/);
  for (const line of ['Deprecation: @1793491200', 'Sunset: Wed, 30 Jun 2027 00:00:00 GMT', 'Link: </graphql>; rel="successor-version"']) {
    expect(stdout).toMatch(new RegExp(`^${line.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\r?$`, 'm'));
  }
  expect(stdout).toContain('{"id":1,"name":"Rex","categoryId":1,"status":"available"}');
  expect(stdout).toMatch(/^X-Total-Count: 1\r?$/m);
  expect(stdout).toMatch(/^\[\{"id":\d+,"petId":1,"quantity":2,"shipDate":"2027-01-02T03:04:05.000Z","complete":false\}\]$/m);
});

it('runs the subscription as written: the stream prints the event the README shows once the stock is set', async () => {
  const event = 'event: next\ndata: {"data":{"inventoryChanged":{"petId":"1","quantity":5,"status":"AVAILABLE"}}}';
  expect(readDocument('README.md')).toContain(event);
  // Its own process group, so that the curl inside is stopped with the shell.
  const stream = spawn('bash', ['-euo', 'pipefail', '-c', inShell(blockWith('/graphql/stream'))], { env: shellEnv(), detached: true });
  const exited = new Promise((resolve) => stream.on('exit', resolve));
  let printed = '';
  const eventOrExit = new Promise<boolean>((resolve) => {
    stream.stdout.on('data', (chunk: Buffer) => {
      printed += chunk.toString();
      if (printed.includes(event)) resolve(true);
    });
    void exited.then(() => resolve(false));
  });
  try {
    await subscribed(t, 1);
    const { stdout } = await promisify(execFile)('bash', ['-euo', 'pipefail', '-c', inShell(blockWith('updateInventory'))], { env: shellEnv() });
    expect(stdout).toContain('"updateInventory":{"quantity":5,"status":"AVAILABLE"}');
    expect({ printedTheEvent: await eventOrExit, printed }).toEqual({ printedTheEvent: true, printed: expect.stringContaining(event) });
  } finally {
    process.kill(-(stream.pid as number), 'SIGTERM');
    await exited;
  }
});
