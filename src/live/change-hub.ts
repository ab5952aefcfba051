import { CATEGORY_CHANGE, type CategoryChange } from '../pets/category.events';
import { PET_CHANGE, type PetChange, STOCK_CHANGE, type StockChange } from '../pets/pet.events';
import { fitsShape } from '../sql/notification-shape';
import { ORDER_CHANGE, type OrderChange } from '../store/order.events';

/** A committed change, as the tables' triggers announce it with NOTIFY (sql/notify.ts). */
export type Change = PetChange | StockChange | OrderChange | CategoryChange;

/** The shape of each type of change: what a payload must be to reach a subscriber. */
export const CHANGE_SHAPES = { pet: PET_CHANGE, stock: STOCK_CHANGE, order: ORDER_CHANGE, category: CATEGORY_CHANGE } as const;

/**
 * Most events one subscription may have waiting to be sent. A burst of changes arrives at once
 * (one read from the listening connection), so this is generous; a subscriber this far behind
 * is not reading, and is told to go rather than buffered without bound.
 */
export const MAX_PENDING_EVENTS = 1_000;

/** Where the hub reports what it fans out (the gateway's metrics). */
export interface ChangeObserver {
  observePublished(type: Change['type']): void;
}

/** How a subscriber that stopped reading is noticed, and told. */
export interface Backlog {
  /** Whether the subscriber's transport already holds too much unsent (checked while it is behind). */
  congested?(): boolean;
  /** Called once, when the subscriber is ended for being too far behind, with the events it will not get. */
  dropped(count: number): void;
}

type Listener = (change: Change) => void;

/** One type's listeners: those that want every change, and the others by the one id they watch. */
interface Listeners {
  all: Set<Listener>;
  byId: Map<string, Set<Listener>>;
}

/**
 * This instance's fan-out of committed changes to its own subscribers. Every subscriber of one
 * change receives the same object, so that they can share one read of the rows it names. A
 * change reaches only the subscribers watching its id (or every id): a thousand subscribers
 * watching other pets cost it nothing.
 */
export class ChangeHub {
  private readonly listeners: Record<Change['type'], Listeners> = {
    stock: listeners(),
    pet: listeners(),
    order: listeners(),
    category: listeners(),
  };
  private readonly positions = new WeakMap<Change, Promise<bigint | undefined>>();

  constructor(private readonly observer?: ChangeObserver) {}

  /**
   * Takes one NOTIFY payload; anything that is not a change (another writer's) is ignored.
   * `position`: where the primary's log was once the change had committed (with read replicas).
   */
  receive(payload: string, position?: Promise<bigint | undefined>): void {
    const change = parseChange(payload);
    if (!change) return;
    if (position) this.positions.set(change, position);
    this.observer?.observePublished(change.type);
    const { all, byId } = this.listeners[change.type];
    for (const listener of all) listener(change);
    const watching = byId.get(idOf(change));
    if (watching) for (const listener of watching) listener(change);
  }

  /**
   * The primary's position past `change`'s commit, when read replicas are configured: a read made
   * to deliver it must see at least that (undefined position: the primary's own reads).
   */
  positionOf(change: object): Promise<bigint | undefined> | undefined {
    return this.positions.get(change as Change);
  }

  /** Stock changes of the listed pets, or of all. */
  stockChanges(petIds: readonly string[] | null, backlog?: Backlog): AsyncIterableIterator<StockChange> {
    return this.stream('stock', petIds, backlog);
  }

  petChanges(ids: readonly string[] | null, backlog?: Backlog): AsyncIterableIterator<PetChange> {
    return this.stream('pet', ids, backlog);
  }

  /** Changes of the listed categories, or of all. */
  categoryChanges(ids: readonly string[] | null, backlog?: Backlog): AsyncIterableIterator<CategoryChange> {
    return this.stream('category', ids, backlog);
  }

  /** One key's orders, or all of them for an admin. */
  orderChanges(scope: { apiKeyId: string; admin: boolean }, backlog?: Backlog): AsyncIterableIterator<OrderChange> {
    return this.stream('order', scope.admin ? null : [scope.apiKeyId], backlog);
  }

  /** A stream of the changes of `type` whose id (idOf) is one of `ids`, or of all when null. */
  private stream<T extends Change>(type: T['type'], ids: readonly string[] | null, backlog?: Backlog) {
    const { all, byId } = this.listeners[type];
    const listener: Listener = (change) => stream.push(change as T);
    const watched = ids && [...new Set(ids)];
    const stream = new ChangeStream<T>(() => {
      if (!watched) return void all.delete(listener);
      for (const id of watched) {
        const set = byId.get(id);
        set?.delete(listener);
        if (set?.size === 0) byId.delete(id);
      }
    }, backlog);
    if (!watched) all.add(listener);
    else for (const id of watched) byId.set(id, (byId.get(id) ?? new Set()).add(listener));
    return stream;
  }
}

function listeners(): Listeners {
  return { all: new Set(), byId: new Map() };
}

/** The id a subscriber of a change's type may watch: the pet's, the category's, or the ordering key's. */
function idOf(change: Change): string {
  switch (change.type) {
    case 'stock':
      return change.petId;
    case 'order':
      return change.apiKeyId;
    default:
      return change.id;
  }
}

/**
 * One subscriber's events, queued until it pulls them: at most MAX_PENDING_EVENTS, and none
 * while its transport is congested.
 */
class ChangeStream<T> implements AsyncIterableIterator<T> {
  private queue: T[] = [];
  private waiting?: (result: IteratorResult<T>) => void;
  private ended = false;

  constructor(
    private readonly detach: () => void,
    private readonly backlog?: Backlog,
  ) {}

  push(change: T): void {
    if (this.ended) return;
    if (this.waiting) {
      const resolve = this.waiting;
      this.waiting = undefined;
      resolve({ value: change, done: false });
    } else if (this.queue.length < MAX_PENDING_EVENTS && !this.backlog?.congested?.()) {
      this.queue.push(change);
    } else {
      const dropped = this.queue.length + 1;
      this.end();
      this.backlog?.dropped(dropped);
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.queue.length > 0) return Promise.resolve({ value: this.queue.shift() as T, done: false });
    if (this.ended) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve) => (this.waiting = resolve));
  }

  async return(): Promise<IteratorResult<T>> {
    this.end();
    return { value: undefined, done: true };
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    return this;
  }

  private end(): void {
    if (this.ended) return;
    this.ended = true;
    this.queue = [];
    this.detach();
    this.waiting?.({ value: undefined, done: true });
    this.waiting = undefined;
  }
}

/** The change a payload announces, if it is exactly one of CHANGE_SHAPES; anything else is no change of ours. */
export function parseChange(payload: string): Change | null {
  let value: unknown;
  try {
    value = JSON.parse(payload);
  } catch {
    return null;
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !Object.hasOwn(CHANGE_SHAPES, type)) return null;
  return fitsShape(CHANGE_SHAPES[type as Change['type']], value) ? value : null;
}
