import { Client } from 'pg';
import { type BenchRequest, q1Request, q2Request, type Target } from './scenarios';
import { PETS } from './fixture';

/** Q1 and Q2 answers in one shape, whichever contender gave them: speed only counts when they are right. */
interface Pet {
  id: string;
  name: string;
  category: string;
  status?: string;
  categoryId?: string;
  quantity?: number;
}

type Json = Record<string, any>;

const q1Of = (target: Target, body: Json): Pet | null => {
  if (target === 'raw GET') return body && { id: String(body.id), name: body.name, category: body.category };
  const pet = target === 'postgraphile' ? body.data.petByRowId : body.data.pet;
  const category = target === 'postgraphile' ? pet?.categoryByCategoryId : pet?.category;
  return pet && { id: String(pet.id ?? pet.rowId), name: pet.name, category: category.name };
};

const q2Of = (target: Target, body: Json): Pet[] => {
  if (target === 'raw GET') {
    return body.map((p: Json) => ({ id: String(p.id), name: p.name, status: p.status, categoryId: String(p.category_id), category: p.category, quantity: p.quantity }));
  }
  const nodes = target === 'postgraphile' ? body.data.allPets.nodes : body.data.pets.nodes;
  return nodes.map((p: Json) => {
    const category = p.category ?? p.categoryByCategoryId;
    return {
      id: String(p.id ?? p.rowId),
      name: p.name,
      status: String(p.status).toLowerCase(),
      categoryId: String(category.id ?? category.rowId),
      category: category.name,
      quantity: (p.inventory ?? p.inventoryItemByPetId).quantity,
    };
  });
};

async function ask(port: number, request: BenchRequest): Promise<Json> {
  const response = await fetch(`http://127.0.0.1:${port}${request.path}`, { method: request.method, headers: request.headers, body: request.body });
  return (await response.json()) as Json;
}

/**
 * Asks a contender Q1 for a few ids (one missing) and Q2, and compares its answers with what the
 * database holds; throws on the first difference, before any load is measured.
 */
export async function checkAnswers(name: string, port: number, target: Target, databaseUrl: string): Promise<void> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const q1 = `SELECT p.id::text, p.name, c.name AS category FROM pets p JOIN categories c ON c.id = p.category_id WHERE p.id = $1`;
    for (const id of ['1', '4321', String(PETS), String(PETS + 1)]) {
      const expected = (await client.query<Pet>(q1, [id])).rows[0] ?? null;
      compare(name, `Q1 id ${id}`, q1Of(target, await ask(port, q1Request(target, id))), expected);
    }
    const expected = (
      await client.query<Pet>(
        `SELECT p.id::text, p.name, p.status::text, c.id::text AS "categoryId", c.name AS category, i.quantity
           FROM pets p JOIN categories c ON c.id = p.category_id JOIN inventory_items i ON i.pet_id = p.id ORDER BY p.id LIMIT 50`,
      )
    ).rows;
    compare(name, 'Q2', q2Of(target, await ask(port, q2Request(target))), expected);
  } finally {
    await client.end();
  }
}

function compare(name: string, question: string, actual: unknown, expected: unknown): void {
  const [a, e] = [JSON.stringify(actual), JSON.stringify(expected)];
  if (a !== e) throw new Error(`${name} answered ${question} wrong: expected ${e}, got ${a}`);
}
