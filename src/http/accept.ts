/** One media range of an Accept header. */
interface Range {
  type: string;
  subtype: string;
  q: number;
  /** Its place in the header: the earlier wins a tie. */
  index: number;
}

function parseAccept(header: string): Range[] {
  const ranges: Range[] = [];
  header.split(',').forEach((part, index) => {
    const [media, ...params] = part.split(';');
    const [type, subtype] = media.trim().toLowerCase().split('/');
    if (!type || !subtype) return;
    let q = 1;
    for (const param of params) {
      const [name, value] = param.split('=');
      if (name.trim().toLowerCase() === 'q') q = Number.parseFloat(value ?? '');
    }
    ranges.push({ type, subtype, q, index });
  });
  return ranges;
}

/**
 * The candidate media type an Accept header prefers, as Negotiator (which Apollo Server uses)
 * chooses: the most specific range matching each candidate gives its quality; the highest quality
 * wins, then the more specific match, then the earlier range, then the earlier candidate.
 * Undefined when the header accepts none of them.
 */
export function preferredType(header: string, candidates: readonly string[]): string | undefined {
  const ranges = parseAccept(header);
  let best: { candidate: string; q: number; specificity: number; index: number } | undefined;
  for (const candidate of candidates) {
    const [type, subtype] = candidate.split('/');
    let match: { q: number; specificity: number; index: number } | undefined;
    for (const range of ranges) {
      const specificity = (range.type === type ? 2 : range.type === '*' ? 0 : -1) + (range.subtype === subtype ? 1 : range.subtype === '*' ? 0 : -10);
      if (specificity < 0) continue;
      if (!match || specificity > match.specificity) match = { q: range.q, specificity, index: range.index };
    }
    if (!match || !(match.q > 0)) continue;
    if (!best || match.q > best.q || (match.q === best.q && (match.specificity > best.specificity || (match.specificity === best.specificity && match.index < best.index)))) {
      best = { candidate, ...match };
    }
  }
  return best?.candidate;
}
