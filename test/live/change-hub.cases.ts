import { ChangeHub, MAX_PENDING_EVENTS } from '../../src/live/change-hub';

const change = (petId: string) => ({ type: 'stock', petId, quantity: 1, status: 'available' });
const stock = (petId: string) => JSON.stringify(change(petId));

describe('ChangeHub', () => {
  it('gives each subscriber the changes it asked for, in the order they came, as one shared object', async () => {
    const hub = new ChangeHub();
    const some = hub.stockChanges(['1', '3']);
    const all = hub.stockChanges(null);
    ['1', '2', '3'].forEach((petId) => hub.receive(stock(petId)));
    const [first, third] = [(await some.next()).value, (await some.next()).value];
    expect([first, third]).toEqual([
      change('1'),
      change('3'),
    ]);
    expect((await all.next()).value).toBe(first);
  });

  it('ignores payloads that are not changes', async () => {
    const hub = new ChangeHub();
    const changes = hub.petChanges(null);
    hub.receive('not json');
    hub.receive(JSON.stringify({ type: 'weather' }));
    hub.receive(JSON.stringify({ type: 'pet', kind: 'CREATED', id: '9' }));
    expect((await changes.next()).value).toEqual({ type: 'pet', kind: 'CREATED', id: '9' });
  });

  it('gives category changes to the listeners of their id, as `category` changes', async () => {
    const hub = new ChangeHub();
    const one = hub.categoryChanges(['2']);
    const pets = hub.petChanges(['2']);
    hub.receive(JSON.stringify({ type: 'category', kind: 'CREATED', id: '1' }));
    hub.receive(JSON.stringify({ type: 'category', kind: 'DELETED', id: '2' }));
    hub.receive(JSON.stringify({ type: 'pet', kind: 'UPDATED', id: '2' }));
    expect((await one.next()).value).toEqual({ type: 'category', kind: 'DELETED', id: '2' });
    expect((await pets.next()).value).toEqual({ type: 'pet', kind: 'UPDATED', id: '2' });
  });

  it('passes on only payloads of exactly their shape: no field missing, none extra, none malformed', async () => {
    const hub = new ChangeHub();
    const changes = hub.stockChanges(null);
    const { quantity: _quantity, ...missing } = change('1');
    for (const wrong of [missing, { ...change('1'), extra: true }, { ...change('1'), quantity: -1 }, { ...change('1'), petId: 1 }, { ...change('1'), status: 'lost' }]) {
      hub.receive(JSON.stringify(wrong));
    }
    hub.receive(stock('2'));
    expect((await changes.next()).value).toEqual(change('2'));
  });

  it('ends a subscriber that falls MAX_PENDING_EVENTS behind, reporting what it drops, instead of buffering without bound', async () => {
    const hub = new ChangeHub();
    const dropped: number[] = [];
    const slow = hub.stockChanges(null, { dropped: (count) => dropped.push(count) });
    const keeping = hub.stockChanges(['0']);
    for (let i = 0; i <= MAX_PENDING_EVENTS + 5; i++) hub.receive(stock(String(i)));
    expect(dropped).toEqual([MAX_PENDING_EVENTS + 1]);
    expect(await slow.next()).toEqual({ value: undefined, done: true });
    expect((await keeping.next()).value).toEqual(change('0'));
  });

  it('stops listening when a subscriber returns, even while it waits for a change', async () => {
    const hub = new ChangeHub();
    const changes = hub.orderChanges({ apiKeyId: '1', admin: false });
    const waiting = changes.next();
    await changes.return?.();
    expect(await waiting).toEqual({ value: undefined, done: true });
    hub.receive(JSON.stringify({ type: 'order', kind: 'PLACED', id: '5', apiKeyId: '1' }));
    expect(await changes.next()).toEqual({ value: undefined, done: true });
  });
});

it('ends a subscriber whose transport is congested as soon as a change finds it behind', async () => {
  const hub = new ChangeHub();
  let congested = false;
  const dropped: number[] = [];
  const changes = hub.stockChanges(null, { congested: () => congested, dropped: (count) => dropped.push(count) });
  hub.receive(stock('1'));
  hub.receive(stock('2'));
  congested = true;
  hub.receive(stock('3'));
  expect(dropped).toEqual([3]);
  expect(await changes.next()).toEqual({ value: undefined, done: true });
});
