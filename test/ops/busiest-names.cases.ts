import { BusiestNames } from '../../src/ops/busiest-names';

describe('BusiestNames', () => {
  it('keeps every name while there is room', () => {
    const names = new BusiestNames(3);
    expect(['a', 'b', 'a', 'c'].map((name) => names.observe(name))).toEqual([undefined, undefined, undefined, undefined]);
    expect(names.size).toBe(3);
  });

  it('lets a new name take the place of the least counted one', () => {
    const names = new BusiestNames(3);
    for (const name of ['a', 'a', 'b', 'b', 'b', 'c']) names.observe(name);
    expect(names.observe('d')).toBe('c');
    expect(['a', 'b', 'd'].every((name) => names.has(name))).toBe(true);
    // 'd' inherited c's count plus one (2): the next newcomer displaces it or 'a' (2), never 'b' (3).
    expect(['a', 'd']).toContain(names.observe('e'));
    expect(names.has('b')).toBe(true);
  });

  it('keeps a frequent name through any number of names seen once', () => {
    const names = new BusiestNames(200);
    for (let i = 0; i < 10; i += 1) names.observe('PetList');
    for (let i = 0; i < 1_000; i += 1) names.observe(`Op_${i}`);
    expect(names.has('PetList')).toBe(true);
    expect(names.size).toBe(200);
  });

  it('always keeps the latest name, so a real name after a flood is labelled at once', () => {
    const names = new BusiestNames(200);
    for (let i = 0; i < 300; i += 1) names.observe(`Op_${i}`);
    names.observe('PetList');
    expect(names.has('PetList')).toBe(true);
  });
});
