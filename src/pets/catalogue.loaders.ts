import DataLoader from 'dataloader';
import type { Count } from '../common/connection';
import { alignByKey } from '../common/loader';
import type { Page, PageRequest } from '../common/page';
import type { Category } from './category.entity';
import type { CategoryService } from './category.service';
import type { Pet } from './pet.entity';
import type { PetFilter } from './pet.queries';
import { PET_COLUMNS, type PetShape, shapeKey, unionOf } from './pet-shape';
import type { PetService } from './pet.service';

export interface PetKey {
  id: string;
  shape: PetShape;
}

export interface PetsOfCategoryKey extends PageRequest {
  categoryId: string;
  shape: PetShape;
}

export type CatalogueLoaders = ReturnType<typeof createCatalogueLoaders>;

/** Per-request loaders for the catalogue: each batches one tick's lookups into one statement. */
export function createCatalogueLoaders(services: { pets: PetService; categories: CategoryService }) {
  /**
   * Pets by id, each read with the columns its selection needs: one tick's lookups, whatever
   * their shapes, share one statement selecting the union of those shapes.
   */
  const petByKey = new DataLoader<PetKey, Pet | null, string>(
    async (keys) => {
      const ids = [...new Set(keys.map((key) => key.id))];
      const pets = await services.pets.findByIds(ids, unionOf(keys.map((key) => key.shape)));
      return alignByKey(
        keys.map((key) => key.id),
        pets,
        (pet) => pet.id,
      );
    },
    { cacheKeyFn: (key) => `${shapeKey(key.shape)}/${key.id}` },
  );
  return {
    petByKey,
    /** A pet with its own columns: for readers that know no selection (order.pet, stock.pet, events). */
    petById: { load: (id: string) => petByKey.load({ id, shape: PET_COLUMNS }) },
    categoryById: new DataLoader<string, Category | null>(async (ids) =>
      alignByKey(ids, await services.categories.findByIds(ids), (category) => category.id),
    ),
    petsOfCategory: new DataLoader<PetsOfCategoryKey, Page<Pet>, string>(
      (keys) => loadPetsOfCategories(services.pets, keys),
      { cacheKeyFn: (key) => `${key.categoryId}/${pageKey(key)}` },
    ),
    /** Counts by filter: aliases counting the same filter share one statement. */
    petCount: new DataLoader<PetFilter, Count, string>((filters) => Promise.all(filters.map((filter) => services.pets.count(filter))), {
      cacheKeyFn: (filter) => JSON.stringify([filter.status ?? null, filter.categoryId ?? null, filter.nameContains ?? null]),
    }),
    petCountOfCategory: new DataLoader<string, number>(async (ids) => {
      const counts = await services.pets.countByCategories(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }),
  };
}

const pageKey = (key: PetsOfCategoryKey) => `${key.first}/${key.afterId ?? ''}/${shapeKey(key.shape)}`;

/** Keys asking for the same page size, cursor and shape share one statement. */
async function loadPetsOfCategories(pets: PetService, keys: readonly PetsOfCategoryKey[]): Promise<Page<Pet>[]> {
  const groups = new Map<string, PetsOfCategoryKey[]>();
  for (const key of keys) {
    const group = pageKey(key);
    groups.set(group, [...(groups.get(group) ?? []), key]);
  }
  const pages = new Map<PetsOfCategoryKey, Page<Pet>>();
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const byCategory = await pets.listByCategories(
        group.map((key) => key.categoryId),
        group[0],
        group[0].shape,
      );
      for (const key of group) pages.set(key, byCategory.get(key.categoryId) ?? { rows: [], hasNextPage: false });
    }),
  );
  return keys.map((key) => pages.get(key) as Page<Pet>);
}
