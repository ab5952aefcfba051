import { petsOfCategoriesPage, petsPage } from '../../src/pets/pet.queries';
import { keyset } from '../../src/sql/rows';

describe('keyset', () => {
  const bind = (values: unknown[]) => (value: unknown) => `$${values.push(value)}`;

  it('asks for one row more than the page, and no cursor condition on the first page', () => {
    const values: unknown[] = [];
    expect(keyset('p.id', { first: 20 }, bind(values))).toEqual({ after: undefined, orderBy: 'p.id ASC', limit: 21 });
    expect(values).toEqual([]);
  });

  it('starts after the cursor going up, before it going down, binding the cursor as a parameter', () => {
    const values: unknown[] = ['earlier'];
    expect(keyset('p.id', { first: 5, afterId: '42' }, bind(values)).after).toBe('p.id > $2');
    expect(keyset('o.id', { first: 5, afterId: '42' }, bind(values), 'DESC')).toEqual({ after: 'o.id < $3', orderBy: 'o.id DESC', limit: 6 });
    expect(values).toEqual(['earlier', '42', '42']);
  });
});

describe('pet page statements', () => {
  it('are prepared once per shape and page size: the cursor is a parameter, the LIMIT text', () => {
    for (const statement of [
      (afterId?: string, first = 3) => petsPage({ status: null }, { first, afterId }),
      (afterId?: string, first = 3) => petsOfCategoriesPage(['1', '2'], { first, afterId }),
    ]) {
      expect(statement('10', 3)).toMatchObject({ name: statement('99', 3).name, text: statement('99', 3).text });
      expect(statement(undefined).name).not.toBe(statement('10').name);
      expect(statement('10', 3).name).not.toBe(statement('10', 50).name);
      // A generic plan for `LIMIT $n` is costed for a tenth of the table: PostgreSQL would plan each page afresh.
      expect(statement('10', 3).text).toMatch(/ORDER BY p\.id ASC LIMIT 4(\) page)?$/);
      expect(statement('10', 3).values).not.toContain(4);
    }
  });
});
