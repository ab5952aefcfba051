import { type Services, createContext } from '../../src/context';

/** What Apollo Server does to the context of each operation (its `cloneObject`). */
const cloneAsApolloDoes = <T extends object>(object: T): T => Object.assign(Object.create(Object.getPrototypeOf(object)), object);

describe('a request context', () => {
  it('makes its loaders on first use, not when Apollo Server copies it, and keeps them', () => {
    const context = cloneAsApolloDoes(createContext({ kind: 'anonymous', address: '127.0.0.1' }, {} as Services));
    // A copy that called the getter would hold the loaders as a plain value already.
    expect(Object.getOwnPropertyDescriptor(context, 'loaders')).toBeUndefined();
    expect(Object.values(context).some((value) => value && typeof value === 'object' && 'petById' in value)).toBe(false);
    const loaders = context.loaders;
    expect(loaders.petById).toBeDefined();
    expect(context.loaders).toBe(loaders);
  });
});
