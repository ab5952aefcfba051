import type { DataSource } from 'typeorm';
import { Category } from '../pets/category.entity';
import { Pet } from '../pets/pet.entity';
import { PetStatus } from '../pets/pet-status';
import { insertStock } from '../pets/stock-status';

type DemoPet = [name: string, stock: number, status?: PetStatus];

const DEMO_CATALOGUE: { name: string; description: string; pets: DemoPet[] }[] = [
  {
    name: 'Dogs',
    description: 'Loyal companions of every size.',
    pets: [['Rex', 3], ['Bella', 1], ['Max', 0], ['Luna', 5], ['Charlie', 2, PetStatus.PENDING]],
  },
  {
    name: 'Cats',
    description: 'Independent, curious and quiet.',
    pets: [['Milo', 4], ['Nala', 0], ['Simba', 2], ['Cleo', 6], ['Oscar', 1, PetStatus.SOLD]],
  },
  {
    name: 'Birds',
    description: 'Songbirds and talkers.',
    pets: [['Kiwi', 8], ['Rio', 3], ['Sunny', 0], ['Pip', 12]],
  },
  {
    name: 'Fish',
    description: 'Freshwater and marine fish.',
    pets: [['Nemo', 20], ['Bubbles', 15], ['Goldie', 9]],
  },
  {
    name: 'Reptiles',
    description: 'Lizards, snakes and tortoises.',
    pets: [['Spike', 2], ['Shelly', 1], ['Iggy', 0]],
  },
];

/** Loads a small demo catalogue when there is none yet; returns false when it left things alone. */
export async function seedDemoCatalogue(db: DataSource): Promise<boolean> {
  return db.transaction(async (manager) => {
    // The lock makes two instances starting on one empty database seed it once.
    await manager.query('LOCK TABLE categories IN EXCLUSIVE MODE');
    if ((await manager.count(Category)) > 0) return false;
    for (const entry of DEMO_CATALOGUE) {
      const category = await manager.save(manager.create(Category, { name: entry.name, description: entry.description }));
      for (const [name, stock, status = PetStatus.AVAILABLE] of entry.pets) {
        const pet = await manager.save(manager.create(Pet, { name, categoryId: category.id, status }));
        await insertStock(manager, pet.id, stock);
      }
    }
    return true;
  });
}
