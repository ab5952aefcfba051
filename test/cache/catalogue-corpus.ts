/**
 * The catalogue documents the oracle asks: every public catalogue field, lists with filters and
 * counts, nested relations, fragments and @include/@skip over variables. Each request is a document
 * with one set of variables; `signature` names it in the reference's timelines.
 */
export interface CatalogueRequest {
  name: string;
  query: string;
  variables: Record<string, unknown>;
}

export const PET = `query Pet($id: ID!) {
  pet(id: $id) { id name status categoryId category { id name description } inventory { petId quantity status } }
}`;

export const PETS = `query Pets($first: Int, $filter: PetFilter) {
  pets(first: $first, filter: $filter) {
    totalCount totalCountPrecision pageInfo { hasNextPage endCursor }
    nodes { id name status categoryId }
  }
}`;

export const CATEGORY = `query Category($id: ID!, $first: Int) {
  category(id: $id) { id name description pets(first: $first) { totalCount nodes { id name status } } }
}`;

export const CATEGORIES = `query Categories {
  categories(first: 50) { totalCount pageInfo { hasNextPage } nodes { id name description } }
}`;

export const INVENTORY = `query Inventory($status: PetStatus, $first: Int) {
  inventory(first: $first, filter: { status: $status }) { totalCount nodes { petId quantity status } }
}`;

export const INVENTORY_ITEM = `query InventoryItem($petId: ID!) {
  inventoryItem(petId: $petId) { petId quantity status pet { id name } }
}`;

export const CARD = `query Card($id: ID!, $withStock: Boolean!, $brief: Boolean!) {
  pet(id: $id) {
    ...PetCard
    inventory @include(if: $withStock) { quantity status }
    category @skip(if: $brief) { ...CategoryName }
  }
}
fragment PetCard on Pet { id name status }
fragment CategoryName on Category { id name }`;

export const signature = (request: CatalogueRequest) => `${request.query}\n${JSON.stringify(request.variables)}`;

/** The readers' corpus over `categoryIds` and a few pets of each (`hotPetIds`), small enough to be asked many times. */
export function readerCorpus(categoryIds: string[], hotPetIds: string[]): CatalogueRequest[] {
  const corpus: CatalogueRequest[] = [
    { name: 'categories', query: CATEGORIES, variables: {} },
    { name: 'pets', query: PETS, variables: { first: 20 } },
    { name: 'pets available', query: PETS, variables: { first: 15, filter: { status: 'AVAILABLE' } } },
    { name: 'pets sold', query: PETS, variables: { first: 10, filter: { status: 'SOLD' } } },
    { name: 'pets named', query: PETS, variables: { first: 10, filter: { nameContains: 'w1-' } } },
    { name: 'pets named', query: PETS, variables: { first: 10, filter: { nameContains: 'ab' } } },
    { name: 'inventory', query: INVENTORY, variables: { first: 20 } },
    { name: 'inventory available', query: INVENTORY, variables: { first: 10, status: 'AVAILABLE' } },
    { name: 'inventory sold', query: INVENTORY, variables: { first: 10, status: 'SOLD' } },
  ];
  for (const [index, id] of categoryIds.entries()) {
    corpus.push({ name: 'category', query: CATEGORY, variables: { id, first: 10 } });
    corpus.push({ name: 'pets of a category', query: PETS, variables: { first: 10, filter: { categoryId: id } } });
    if (index % 4 === 0) corpus.push({ name: 'available pets of a category', query: PETS, variables: { first: 5, filter: { categoryId: id, status: 'AVAILABLE' } } });
  }
  for (const [index, id] of hotPetIds.entries()) {
    corpus.push({ name: 'pet', query: PET, variables: { id } });
    corpus.push({ name: 'inventory item', query: INVENTORY_ITEM, variables: { petId: id } });
    corpus.push({ name: 'card', query: CARD, variables: { id, withStock: index % 2 === 0, brief: index % 3 === 0 } });
  }
  return corpus;
}

/** What a writer reads back after changing a pet it owns: the pet, its stock, its category's list. */
export function petCover(petId: string, categoryId: string): CatalogueRequest[] {
  return [
    { name: 'pet', query: PET, variables: { id: petId } },
    { name: 'inventory item', query: INVENTORY_ITEM, variables: { petId } },
    { name: 'category', query: CATEGORY, variables: { id: categoryId, first: 100 } },
    { name: 'pets of a category', query: PETS, variables: { first: 100, filter: { categoryId } } },
  ];
}

/** What a writer reads back after changing a category it owns. */
export function categoryCover(categoryId: string, petId: string): CatalogueRequest[] {
  return [
    { name: 'category', query: CATEGORY, variables: { id: categoryId, first: 5 } },
    { name: 'card', query: CARD, variables: { id: petId, withStock: false, brief: false } },
  ];
}
