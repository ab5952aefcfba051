import DataLoader from 'dataloader';
import type { Count } from '../common/connection';
import { alignByKey } from '../common/loader';
import type { Page, PageRequest } from '../common/page';
import type { Category } from './category.entity';
import type { CategoryService } from './category.service';
import type { Pet } from './pet.entity';
import type { PetFilter, PetRelations } from './pet.queries';
import type { PetService } from './pet.service';

export interface PetsOfCategoryKey extends PageRequest {
  categoryId: string;
}

export type CatalogueLoaders = ReturnType<typeof createCatalogueLoaders>;

/** Per-request loaders for the catalogue: each batches one tick's lookups into one statement. */
export function createCatalogueLoaders(services: { pets: PetService; categories: CategoryService }) {
  const petsWith = new Map<string, DataLoader<string, Pet | null>>();
  /** Pets by id with `relations` joined in: aliased `pet(id)` fields of one shape share one statement. */
  const petByIdWith = (relations: PetRelations): DataLoader<string, Pet | null> => {
    const key = `${relations.category ? 'c' : ''}${relations.inventory ? 'i' : ''}`;
    let loader = petsWith.get(key);
    if (!loader) {
      loader = new DataLoader(async (ids) => alignByKey(ids, await services.pets.findByIds(ids, relations), (pet) => pet.id));
      petsWith.set(key, loader);
    }
    return loader;
  };
  return {
    petById: petByIdWith({}),
    petByIdWith,
    categoryById: new DataLoader<string, Category | null>(async (ids) =>
      alignByKey(ids, await services.categories.findByIds(ids), (category) => category.id),
    ),
    petsOfCategory: new DataLoader<PetsOfCategoryKey, Page<Pet>, string>(
      (keys) => loadPetsOfCategories(services.pets, keys),
      { cacheKeyFn: (key) => `${key.categoryId}/${key.first}/${key.afterId ?? ''}` },
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

/** Keys asking for the same page size and cursor share one statement. */
async function loadPetsOfCategories(pets: PetService, keys: readonly PetsOfCategoryKey[]): Promise<Page<Pet>[]> {
  const groups = new Map<string, PetsOfCategoryKey[]>();
  for (const key of keys) {
    const group = `${key.first}/${key.afterId ?? ''}`;
    groups.set(group, [...(groups.get(group) ?? []), key]);
  }
  const pages = new Map<PetsOfCategoryKey, Page<Pet>>();
  await Promise.all(
    [...groups.values()].map(async (group) => {
      const byCategory = await pets.listByCategories(
        group.map((key) => key.categoryId),
        group[0],
      );
      for (const key of group) pages.set(key, byCategory.get(key.categoryId) ?? { rows: [], hasNextPage: false });
    }),
  );
  return keys.map((key) => pages.get(key) as Page<Pet>);
}
