import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ERROR_STATUS, type ErrorCode } from '../src/errors';

const read = (file: string) => readFileSync(join(__dirname, '..', file), 'utf8');

/**
 * Apollo Server sends it only when automatic persisted queries are turned off, which this
 * gateway never does; it stays in ERROR_STATUS so that formatError knows it.
 */
const NEVER_SENT: ErrorCode[] = ['PERSISTED_QUERY_NOT_SUPPORTED'];

/** The `| status | codes |` table after `heading`: each code with the statuses of its row. */
function statusTable(markdown: string, heading: string): Map<string, number[]> {
  const start = markdown.indexOf(heading);
  expect(start).toBeGreaterThanOrEqual(0);
  const table = markdown.slice(markdown.indexOf('| status | codes |', start)).split('\n\n')[0];
  const codes = new Map<string, number[]>();
  for (const [, statuses, cell] of table.matchAll(/^\| ([\d /]+) \| (.*) \|$/gm)) {
    for (const [, code] of cell.matchAll(/`([A-Z][A-Z_]+)`/g)) codes.set(code, statuses.split('/').map(Number));
  }
  return codes;
}

describe.each([
  ['docs/api.md', '## Errors'],
  ['docs/contract.md', '## 6. Errors'],
])('the error table of %s', (file, heading) => {
  const documented = statusTable(read(file), heading);

  it('gives each code the status the gateway sends it with', () => {
    for (const [code, statuses] of documented) {
      expect({ code, statuses }).toEqual({ code, statuses: expect.arrayContaining([ERROR_STATUS[code as ErrorCode]]) });
    }
  });

  it('lists every code the gateway sends', () => {
    const sent = Object.keys(ERROR_STATUS).filter((code) => !NEVER_SENT.includes(code as ErrorCode));
    expect([...documented.keys()].sort()).toEqual(sent.sort());
  });
});
