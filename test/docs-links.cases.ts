import { existsSync } from 'node:fs';
import { dirname, join, normalize, relative } from 'node:path';
import { DOCUMENTS, LAB_NOTES, readDocument, REPOSITORY_ROOT as root } from './helpers/docs';

/**
 * The README, the guides and the lab notes link to one another's sections; a section that moves changes its
 * anchor. Every relative link must name a file of the repository and, with `#…`, a heading in it.
 */

/** The text outside fenced code blocks, where a `](#x)` is code, not a link. */
const prose = (markdown: string) => markdown.replace(/^ *```[\s\S]*?^ *```/gm, '');

/** GitHub's anchors for a file's headings: lower case, punctuation dropped, spaces to hyphens, repeats numbered. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const [, heading] of prose(markdown).matchAll(/^#{1,6} (.+)$/gm)) {
    const slug = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

/** Each relative link of a file: the file it names, from the repository's root, and its anchor. */
function links(file: string): { target: string; anchor?: string; text: string }[] {
  return [...prose(readDocument(file)).matchAll(/\]\(([^)\s]+)\)/g)]
    .map(([, href]) => href)
    .filter((href) => !/^[a-z][a-z0-9+.-]*:/i.test(href))
    .map((href) => {
      const [path, anchor] = href.split('#');
      const target = path === '' ? file : normalize(relative(root, join(root, dirname(file), path)));
      return { target, anchor, text: href };
    });
}

describe.each([...DOCUMENTS, ...LAB_NOTES])('the links of %s', (file) => {
  it('name files that exist and headings they have', () => {
    const broken = links(file).filter(({ target, anchor }) => {
      if (!existsSync(join(root, target))) return true;
      return anchor !== undefined && target.endsWith('.md') && !anchors(readDocument(target)).has(anchor);
    });
    expect(broken.map(({ text }) => text)).toEqual([]);
  });
});
