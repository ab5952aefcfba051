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

/** The catalogue's loaders as their users see them (a class's private state left out of its type). */
export type CatalogueLoaders = Pick<CatalogueLoaderSet, keyof CatalogueLoaderSet>;

/**
 * Per-request loaders for the catalogue: each batches one tick's lookups into one statement. Each
 * is made on first use: most requests use one of them or none.
 */
export class CatalogueLoaderSet {
  private madePetByKey?: DataLoader<PetKey, Pet | null, string>;
  private madePetById?: { load(id: string): Promise<Pet | null> };
  private madeCategoryById?: DataLoader<string, Category | null>;
  private madePetsOfCategory?: DataLoader<PetsOfCategoryKey, Page<Pet>, string>;
  private madePetCount?: DataLoader<PetFilter, Count, string>;
  private madePetCountOfCategory?: DataLoader<string, number>;

  constructor(private readonly services: { pets: PetService; categories: CategoryService }) {}

  /**
   * Pets by id, each read with the columns its selection needs: one tick's lookups, whatever
   * their shapes, share one statement selecting the union of those shapes.
   */
  get petByKey(): DataLoader<PetKey, Pet | null, string> {
    const { pets } = this.services;
    return (this.madePetByKey ??= new DataLoader<PetKey, Pet | null, string>(
      async (keys) => {
        const ids = [...new Set(keys.map((key) => key.id))];
        const found = await pets.findByIds(ids, unionOf(keys.map((key) => key.shape)));
        return alignByKey(
          keys.map((key) => key.id),
          found,
          (pet) => pet.id,
        );
      },
      { cacheKeyFn: (key) => `${shapeKey(key.shape)}/${key.id}` },
    ));
  }

  /** A pet with its own columns: for readers that know no selection (order.pet, stock.pet, events). */
  get petById(): { load(id: string): Promise<Pet | null> } {
    return (this.madePetById ??= { load: (id: string) => this.petByKey.load({ id, shape: PET_COLUMNS }) });
  }

  get categoryById(): DataLoader<string, Category | null> {
    const { categories } = this.services;
    return (this.madeCategoryById ??= new DataLoader<string, Category | null>(async (ids) =>
      alignByKey(ids, await categories.findByIds(ids), (category) => category.id),
    ));
  }

  get petsOfCategory(): DataLoader<PetsOfCategoryKey, Page<Pet>, string> {
    const { pets } = this.services;
    return (this.madePetsOfCategory ??= new DataLoader<PetsOfCategoryKey, Page<Pet>, string>((keys) => loadPetsOfCategories(pets, keys), {
      cacheKeyFn: (key) => `${key.categoryId}/${pageKey(key)}`,
    }));
  }

  /** Counts by filter: aliases counting the same filter share one statement. */
  get petCount(): DataLoader<PetFilter, Count, string> {
    const { pets } = this.services;
    return (this.madePetCount ??= new DataLoader<PetFilter, Count, string>((filters) => Promise.all(filters.map((filter) => pets.count(filter))), {
      cacheKeyFn: (filter) => JSON.stringify([filter.status ?? null, filter.categoryId ?? null, filter.nameContains ?? null]),
    }));
  }

  get petCountOfCategory(): DataLoader<string, number> {
    const { pets } = this.services;
    return (this.madePetCountOfCategory ??= new DataLoader<string, number>(async (ids) => {
      const counts = await pets.countByCategories(ids);
      return ids.map((id) => counts.get(id) ?? 0);
    }));
  }
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
