import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENVIRONMENT_VARIABLES, loadConfig } from '../src/config';

const root = join(__dirname, '..');
const read = (file: string) => readFileSync(join(root, file), 'utf8');

/** The text of one `## ` section of a Markdown file, up to the next. */
function section(markdown: string, heading: string): string {
  const start = markdown.indexOf(`\n## ${heading}\n`);
  expect(start).toBeGreaterThanOrEqual(0);
  const end = markdown.indexOf('\n## ', start + 1);
  return markdown.slice(start, end === -1 ? undefined : end);
}

/** The variables named in the first column of a Markdown table: rows starting "| `NAME` |". */
function tableVariables(markdown: string): string[] {
  return [...markdown.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((match) => match[1]);
}

/** The variables loadConfig actually reads, whatever the branch: every read of the environment is recorded. */
function variablesRead(): Set<string> {
  const read = new Set<string>();
  const recording = new Proxy<Record<string, string | undefined>>({}, {
    get(_target, name) {
      if (typeof name === 'string') read.add(name);
      return undefined;
    },
  });
  loadConfig(recording);
  return read;
}

describe('the settings are documented once, and truly', () => {
  const documentedTable = tableVariables(section(read('docs/operating.md'), 'Configuration'));

  it('lists in ENVIRONMENT_VARIABLES exactly what loadConfig reads', () => {
    expect([...variablesRead()].sort()).toEqual([...ENVIRONMENT_VARIABLES].sort());
  });

  it('names every variable once in the Configuration table of docs/operating.md, and nothing else', () => {
    expect(documentedTable.length).toBe(new Set(documentedTable).size);
    expect([...documentedTable].sort()).toEqual([...ENVIRONMENT_VARIABLES].sort());
  });

  it('keeps no second table in docs/contract.md, which links to that one', () => {
    const contract = section(read('docs/contract.md'), '2. Configuration');
    expect(tableVariables(contract)).toEqual([]);
    expect(contract).toContain('](operating.md#configuration)');
  });
});
