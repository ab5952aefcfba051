import {
  type DocumentNode,
  type FragmentDefinitionNode,
  type FragmentSpreadNode,
  getArgumentValues,
  getNamedType,
  type GraphQLObjectType,
  type GraphQLSchema,
  type InlineFragmentNode,
  isObjectType,
  Kind,
  type OperationDefinitionNode,
  type SelectionSetNode,
} from 'graphql';
import type { Tag } from '../cache/cache-tags';
import { fragmentsOf } from './fragments';

/** The list each root field reads, or the entity its argument names (found or not). */
const ROOT_TAGS: Record<string, { list?: Tag; entity?: { kind: string; argument: string } }> = {
  pet: { entity: { kind: 'pet', argument: 'id' } },
  pets: { list: 'pets' },
  category: { entity: { kind: 'category', argument: 'id' } },
  categories: { list: 'categories' },
  inventoryItem: { entity: { kind: 'stock', argument: 'petId' } },
  inventory: { list: 'stock' },
};

/**
 * Types whose fields read one row, named by the field holding its id; when the answer does not
 * hold that id, by the list holding every such row, which every change to one of them purges.
 */
const ENTITIES: Record<string, { kind: string; idField: string; list: Tag }> = {
  Pet: { kind: 'pet', idField: 'id', list: 'pets' },
  Category: { kind: 'category', idField: 'id', list: 'categories' },
  InventoryItem: { kind: 'stock', idField: 'petId', list: 'stock' },
};

/** Fields that read another list, or a row named by their parent's id, beside their object's own. */
const RELATED: Record<string, { list?: Tag; childIdIsParents?: boolean }> = {
  'Category.pets': { list: 'pets' },
  'Pet.inventory': { childIdIsParents: true },
  'InventoryItem.pet': { childIdIsParents: true },
};

/** Types that only carry what their list's root field (and its tag) read: pages, edges, page info. */
const CARRIERS = /(Connection|Edge)$|^PageInfo$/;

/** Nothing names what an answer read: it is not kept. */
export const UNTAGGABLE = null;

/**
 * The tags of an answer, read from its data along the operation's selections: each root field's
 * list or entity, each object's row by the id the answer holds, and the lists some fields read.
 * UNTAGGABLE when the answer holds a type no tag names.
 */
export function tagsOfAnswer(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  variables: Record<string, unknown>,
  data: Record<string, unknown>,
): Tag[] | typeof UNTAGGABLE {
  const root = schema.getQueryType();
  if (!root || operation.operation !== 'query') return UNTAGGABLE;
  const walker = new AnswerWalker(schema, fragmentsOf(document), variables);
  walker.fields(root, operation.selectionSet, data);
  return walker.taggable ? [...walker.tags].sort() : UNTAGGABLE;
}

class AnswerWalker {
  readonly tags = new Set<Tag>();
  taggable = true;

  constructor(
    private readonly schema: GraphQLSchema,
    private readonly fragments: Record<string, FragmentDefinitionNode>,
    private readonly variables: Record<string, unknown>,
  ) {}

  /** One object of `type` in the answer: its row's tag, then its fields'. `knownId`: its id, when its field's arguments or parent named it. */
  object(type: GraphQLObjectType, selectionSet: SelectionSetNode, value: Record<string, unknown>, knownId?: string): void {
    const entity = ENTITIES[type.name];
    if (entity) {
      const id = this.idIn(type, selectionSet, value, entity.idField) ?? knownId;
      this.tags.add(id === undefined ? entity.list : `${entity.kind}:${id}`);
      this.fields(type, selectionSet, value, id);
    } else if (CARRIERS.test(type.name)) {
      this.fields(type, selectionSet, value);
    } else {
      this.taggable = false;
    }
  }

  fields(type: GraphQLObjectType, selectionSet: SelectionSetNode, value: Record<string, unknown>, ownId?: string): void {
    for (const selection of selectionSet.selections) {
      if (!this.taggable) return;
      if (selection.kind !== Kind.FIELD) {
        const spread = this.spreadOn(type, selection);
        if (spread) this.fields(type, spread, value, ownId);
        continue;
      }
      const name = selection.name.value;
      const key = selection.alias?.value ?? name;
      if (name === '__typename' || !(key in value)) continue;
      const field = type.getFields()[name];
      if (!field) {
        this.taggable = false;
        return;
      }
      let childId: string | undefined;
      if (type === this.schema.getQueryType()) {
        const root = ROOT_TAGS[name];
        if (!root) {
          this.taggable = false;
          return;
        }
        if (root.entity) {
          childId = String(getArgumentValues(field, selection, this.variables)[root.entity.argument]);
          this.tags.add(`${root.entity.kind}:${childId}`);
        } else if (root.list) {
          this.tags.add(root.list);
        }
      }
      const related = RELATED[`${type.name}.${name}`];
      if (related?.list) this.tags.add(related.list);
      if (related?.childIdIsParents) childId = ownId;
      const child = getNamedType(field.type);
      if (selection.selectionSet && isObjectType(child)) this.each(value[key], (item) => this.object(child, selection.selectionSet as SelectionSetNode, item, childId));
    }
  }

  /** The id an object's answer holds in `idField`, under whatever alias. */
  private idIn(type: GraphQLObjectType, selectionSet: SelectionSetNode, value: Record<string, unknown>, idField: string): string | undefined {
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.FIELD) {
        const held = value[selection.alias?.value ?? selection.name.value];
        if (selection.name.value === idField && (typeof held === 'string' || typeof held === 'number')) return String(held);
      } else {
        const spread = this.spreadOn(type, selection);
        const found = spread && this.idIn(type, spread, value, idField);
        if (found !== undefined) return found;
      }
    }
    return undefined;
  }

  /** The selections a fragment (named or inline) adds to an object of `type`, if its condition holds. */
  private spreadOn(type: GraphQLObjectType, selection: FragmentSpreadNode | InlineFragmentNode): SelectionSetNode | undefined {
    const fragment = selection.kind === Kind.FRAGMENT_SPREAD ? this.fragments[selection.name.value] : selection;
    const condition = fragment?.typeCondition?.name.value;
    return fragment && (condition === undefined || condition === type.name) ? fragment.selectionSet : undefined;
  }

  /** Calls `visit` on each object a field's value holds: itself, or the items of its lists. */
  private each(value: unknown, visit: (item: Record<string, unknown>) => void): void {
    if (Array.isArray(value)) for (const item of value) this.each(item, visit);
    else if (value !== null && typeof value === 'object') visit(value as Record<string, unknown>);
  }
}

