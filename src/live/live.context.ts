import type { Caller } from '../auth/caller';
import type { CatalogueLoaders } from '../pets/catalogue.loaders';
import type { StoreLoaders } from '../store/store.loaders';
import type { Backlog, ChangeHub } from './change-hub';
import type { SubscriptionSlots } from './subscription-slots';

/** This instance's live updates: the fan-out of committed changes and the subscription slots. */
export interface LiveServices {
  hub: ChangeHub;
  slots: SubscriptionSlots;
}

/**
 * What the subscription resolvers use of their context (context.ts builds it). For each event,
 * the loaders are the event's own, shared by every subscriber of it on this instance.
 */
export interface LiveContext {
  caller: Caller;
  services: { live: LiveServices };
  loaders: Pick<CatalogueLoaders, 'petById'> & Pick<StoreLoaders, 'orderById'>;
  /** How the transport tells a subscriber that stopped reading, and what it does with it. */
  backlog?: Backlog;
}
