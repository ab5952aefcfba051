import type { FieldNode, GraphQLResolveInfo } from 'graphql';
import { derivedOnce } from '../common/selection';

/**
 * What a read of pets selects: the columns and joins the GraphQL selection needs, and no more
 * (p.id always). A shape names its statements, so the shapes are finite: subsets of PET_PARTS.
 */
export const PET_PARTS = ['name', 'category_id', 'status', 'category', 'c_name', 'c_description', 'inventory', 'i_quantity', 'i_status'] as const;
export type PetPart = (typeof PET_PARTS)[number];
export type PetShape = ReadonlySet<PetPart>;

/** A shape holding `parts`, with the joins their columns come from. */
export function petShape(parts: Iterable<PetPart>): PetShape {
  const shape = new Set(parts);
  if (shape.has('c_name') || shape.has('c_description')) shape.add('category');
  if (shape.has('i_quantity') || shape.has('i_status')) shape.add('inventory');
  return shape;
}

/** The pet's own columns, no join: what a read that knows no selection returns (REST, order.pet, events). */
export const PET_COLUMNS = petShape(['name', 'category_id', 'status']);
/** Every column and join. */
export const WHOLE_PET = petShape(PET_PARTS);

/** A short, stable key of a shape: the bit mask of its parts, in hex. */
export const shapeKey = (shape: PetShape) => PET_PARTS.reduce((mask, part, bit) => (shape.has(part) ? mask | (1 << bit) : mask), 0).toString(16);

export const unionOf = (shapes: Iterable<PetShape>) => petShape([...shapes].flatMap((shape) => [...shape]));

/** The fields selected at a path below a pet (`[]` for its own, `['category']` for its category's). */
export type SelectionAt = (path: string[]) => ReadonlySet<string>;

/**
 * The shape a selection of Pet fields needs. A field this mapping does not know (one added to
 * the schema later) gets every column of its level: more work, never a wrong answer.
 */
export function shapeOfSelection(select: SelectionAt): PetShape {
  const parts: PetPart[] = [];
  for (const field of select([])) {
    if (field === 'id' || field === '__typename') continue;
    else if (field === 'name') parts.push('name');
    else if (field === 'categoryId') parts.push('category_id');
    else if (field === 'status') parts.push('status');
    else if (field === 'category') parts.push('category', ...categoryParts(select(['category'])));
    else if (field === 'inventory') parts.push('inventory', ...inventoryParts(select(['inventory'])));
    else parts.push(...PET_PARTS);
  }
  return petShape(parts);
}

/** The pet fields a connection selects, through `nodes` and `edges { node }` alike. */
export const nodeSelection =
  (select: SelectionAt): SelectionAt =>
  (path) =>
    new Set([...select(['nodes', ...path]), ...select(['edges', 'node', ...path])]);

const petFieldShapes = new WeakMap<FieldNode, PetShape>();
const petPageShapes = new WeakMap<FieldNode, PetShape>();

/** The shape a field answering one pet (`pet(id)`) needs, worked out once per field of a document. */
export const shapeOfPetField = (info: GraphQLResolveInfo): PetShape => derivedOnce(petFieldShapes, info, shapeOfSelection);

/** The shape a field answering a page of pets needs, worked out once per field of a document. */
export const shapeOfPetPage = (info: GraphQLResolveInfo): PetShape => derivedOnce(petPageShapes, info, (select) => shapeOfSelection(nodeSelection(select)));

/** A joined category's id is the pet's category_id. */
function categoryParts(fields: ReadonlySet<string>): PetPart[] {
  const parts: PetPart[] = [];
  for (const field of fields) {
    if (field === '__typename') continue;
    else if (field === 'name') parts.push('c_name');
    else if (field === 'description') parts.push('c_description');
    else if (field === 'id' || field === 'pets') parts.push('category_id');
    else parts.push('category_id', 'c_name', 'c_description');
  }
  return parts;
}

/** A joined stock row's petId is the pet's id, always read. */
function inventoryParts(fields: ReadonlySet<string>): PetPart[] {
  const parts: PetPart[] = [];
  for (const field of fields) {
    if (field === '__typename' || field === 'petId' || field === 'pet') continue;
    else if (field === 'quantity') parts.push('i_quantity');
    else if (field === 'status') parts.push('i_status');
    else parts.push('i_quantity', 'i_status');
  }
  return parts;
}
