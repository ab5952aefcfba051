import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ts from 'typescript';
import { transpile } from '../../scripts/transpile';
import { originalStack } from '../../src/common/source-stack';

/**
 * A built file's stack names its TypeScript source's lines though the process runs without
 * `--enable-source-maps`: the stack is thrown in a process of its own, as the gateway runs, and
 * mapped here as the log's error serializer maps it.
 */
const SOURCE = [
  'interface Order { id: number }', // type-only lines shift the built file's lines
  'type Id = number;',
  '',
  'export function place(order: Order, id: Id): never {',
  "  throw new Error(`order ${order.id} for ${id} refused`);",
  '}',
  '',
].join('\n');
/** Where `new Error` stands in SOURCE: line 5, column 9 (1-based). */
const THROW_AT = ':5:9';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'source-stack-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The stack of `place` throwing, from a plain `node` process that requires the built file. */
function thrownStack(builtFile: string): string {
  const script = `try { require(${JSON.stringify(builtFile)}).place({ id: 7 }, 3); } catch (error) { process.stdout.write(error.stack); }`;
  return execFileSync(process.execPath, ['-e', script], { encoding: 'utf8' });
}

it('maps a frame of a file built by `npm run build` (an inline source map) to its TypeScript line', () => {
  const built = join(dir, 'inline.js');
  writeFileSync(built, transpile(SOURCE, join(dir, 'inline.ts')));
  const stack = thrownStack(built);
  expect(stack).toContain(`${built}:`);

  const mapped = originalStack(stack);
  expect(mapped).toContain(`at Object.place (${join(dir, 'inline.ts')}${THROW_AT})`);
  expect(mapped).not.toContain(`${built}:`);
  expect(mapped.split('\n')[0]).toBe('Error: order 7 for 3 refused');
});

it('maps a frame of a file built by tsc (a source map file beside it)', () => {
  const built = join(dir, 'beside.js');
  const output = ts.transpileModule(SOURCE, {
    fileName: join(dir, 'beside.ts'),
    compilerOptions: { module: ts.ModuleKind.CommonJS, target: ts.ScriptTarget.ES2022, sourceMap: true },
  });
  writeFileSync(built, output.outputText.replace(/\/\/# sourceMappingURL=.*$/m, '//# sourceMappingURL=beside.js.map'));
  writeFileSync(`${built}.map`, output.sourceMapText as string);

  expect(originalStack(thrownStack(built))).toContain(`(${join(dir, 'beside.ts')}${THROW_AT})`);
});

it("leaves alone frames of Node's own modules, of dependencies, and of files without a map", () => {
  const plain = join(dir, 'plain.js');
  writeFileSync(plain, 'exports.place = () => { throw new Error("no map"); };\n');
  const stack = [
    'Error: no map',
    `    at exports.place (${plain}:1:31)`,
    '    at Module._compile (node:internal/modules/cjs/loader:1521:14)',
    `    at Parser.parse (${join(dir, 'node_modules', 'pg-protocol', 'dist', 'parser.js')}:37:38)`,
    `    at ${join(dir, 'gone.js')}:3:4`,
  ].join('\n');
  expect(originalStack(stack)).toBe(stack);
});
