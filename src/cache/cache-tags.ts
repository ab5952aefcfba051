import type { Change } from '../live/change-hub';

/**
 * What a cached answer read, named as the change stream names what changed: an entity (`pet:1`,
 * `category:2`, `stock:1`, a pet's stock row) or a list whose members or counts a write can
 * change (`pets`, every list or count of pets, a category's included; `categories`; `stock`).
 */
export type Tag = string;

/**
 * The tags a committed change purges. A pet created, changed or deleted: its own answers, and
 * every list of pets (its name, status or category may move it in or out of any of them, and
 * every count), its stock row's with it; a stock change: that row's and the stock lists; a
 * category's: its own and the list of categories. An order is never cached; the stock it takes
 * arrives as a stock change.
 */
export function tagsOfChange(change: Change): Tag[] {
  switch (change.type) {
    case 'pet':
      return [`pet:${change.id}`, 'pets', `stock:${change.id}`, 'stock'];
    case 'stock':
      return [`stock:${change.petId}`, 'stock'];
    case 'category':
      return [`category:${change.id}`, 'categories'];
    case 'order':
      return [];
  }
}
