import DataLoader from 'dataloader';
import { alignByKey } from '../common/loader';
import type { Page, PageRequest } from '../common/page';
import type { Category } from './category.entity';
import type { CategoryService } from './category.service';
import type { Pet } from './pet.entity';
import type { PetService } from './pet.service';

export interface PetsOfCategoryKey extends PageRequest {
  categoryId: string;
}

/** Per-request loaders for the catalogue: each batches one tick's lookups into one statement. */
export function createCatalogueLoaders(services: { pets: PetService; categories: CategoryService }) {
  return {
    petById: new DataLoader<string, Pet | null>(async (ids) =>
      alignByKey(ids, await services.pets.findByIds(ids), (pet) => pet.id),
    ),
    categoryById: new DataLoader<string, Category | null>(async (ids) =>
      alignByKey(ids, await services.categories.findByIds(ids), (category) => category.id),
    ),
    petsOfCategory: new DataLoader<PetsOfCategoryKey, Page<Pet>, string>(
      (keys) => loadPetsOfCategories(services.pets, keys),
      { cacheKeyFn: (key) => `${key.categoryId}/${key.first}/${key.afterId ?? ''}` },
    ),
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
