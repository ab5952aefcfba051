import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The repository's root, where README.md is. */
export const REPOSITORY_ROOT = join(__dirname, '..', '..');

/** The README and the guides under docs/, as paths from the repository's root. */
export const DOCUMENTS = [
  'README.md',
  ...readdirSync(join(REPOSITORY_ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => `docs/${name}`),
];

/** The lab notes behind docs/performance.md, one file per round or subject. */
export const LAB_NOTES = readdirSync(join(REPOSITORY_ROOT, 'docs', 'lab'))
  .filter((name) => name.endsWith('.md'))
  .sort()
  .map((name) => `docs/lab/${name}`);

export const readDocument = (path: string) => readFileSync(join(REPOSITORY_ROOT, path), 'utf8');

/** The fenced blocks of one language (```sh, ```graphql) in a document, in order, each with the file it is in. */
export function fencedBlocks(language: string, documents: string[] = DOCUMENTS): { file: string; text: string }[] {
  return documents.flatMap((file) =>
    [...readDocument(file).matchAll(new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\`\`\``, 'g'))].map((match) => ({ file, text: match[1] })),
  );
}
