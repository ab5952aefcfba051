import { type GraphQLFieldResolver, type GraphQLSchema, isObjectType } from 'graphql';
import { getMetadataStorage } from 'type-graphql';

/** One parameter of a resolver method, read from graphql-js's arguments; NOT_DIRECT when only TypeGraphQL can give it. */
type ParamReader = (root: unknown, args: Record<string, unknown>, context: unknown, info: unknown) => unknown;

const NOT_DIRECT = Symbol('not direct');

/** What TypeGraphQL's metadata says of a resolver method (its typings are not all exported). */
interface MethodMetadata {
  target: Function;
  methodName: string;
  schemaName: string;
  params?: ParamMetadata[];
  roles?: unknown[];
  middlewares?: unknown[];
}

type ParamMetadata =
  | { kind: 'info'; index: number }
  | { kind: 'context'; index: number; propertyName?: string }
  | { kind: 'root'; index: number; propertyName?: string; getType?: () => unknown }
  | { kind: 'arg'; index: number; name: string; typeOptions: { array?: boolean }; validateFn?: unknown }
  | { kind: 'args' | 'custom' | 'pubSub'; index: number };

/**
 * Calls resolver methods directly where TypeGraphQL's wrapper would change nothing: no auth
 * check, no middleware (a field limit is one), and parameters that are the root, the context,
 * the info or a scalar argument. TypeGraphQL's wrapper sorts the parameters, converts and
 * validates each argument (asynchronously: a promise per call) and runs an empty middleware
 * chain on every call, for every item of a page; here each parameter is read as graphql-js
 * hands it over. Where a value would be converted or validated (an object argument, a root that
 * is not yet an instance of its class), the call goes through TypeGraphQL's own wrapper.
 */
export function callResolversDirectly(schema: GraphQLSchema, resolvers: readonly Function[]): void {
  const storage = getMetadataStorage();
  const ours = (def: MethodMetadata) => resolvers.includes(def.target);
  const roots: [MethodMetadata[], string | undefined][] = [
    [storage.queries as MethodMetadata[], schema.getQueryType()?.name],
    [storage.mutations as MethodMetadata[], schema.getMutationType()?.name],
  ];
  for (const [defs, typeName] of roots) {
    for (const def of defs.filter(ours)) if (typeName) replace(schema, typeName, def);
  }
  for (const def of storage.fieldResolvers.filter((each) => each.kind === 'external' && ours(each as MethodMetadata))) {
    const typeClass = def.getObjectType?.();
    const typeName = storage.objectTypes.find((type) => type.target === typeClass)?.name;
    if (typeName) replace(schema, typeName, def as MethodMetadata);
  }
}

function replace(schema: GraphQLSchema, typeName: string, def: MethodMetadata): void {
  const type = schema.getType(typeName);
  const field = isObjectType(type) ? type.getFields()[def.schemaName] : undefined;
  const wrapped = field?.resolve;
  if (!field || !wrapped || def.roles || def.middlewares?.length) return;
  const readers = [...(def.params ?? [])].sort((a, b) => a.index - b.index).map(readerOf);
  if (readers.some((reader) => reader === undefined)) return;
  const read = readers as ParamReader[];
  const method = (def.target.prototype as Record<string, (...params: unknown[]) => unknown>)[def.methodName];
  let instance: object | undefined;
  const direct: GraphQLFieldResolver<unknown, unknown> = (root, args, context, info) => {
    const values = new Array<unknown>(read.length);
    for (let i = 0; i < read.length; i += 1) {
      const value = read[i](root, args, context, info);
      if (value === NOT_DIRECT) return wrapped(root, args, context, info);
      values[i] = value;
    }
    // TypeGraphQL's container makes one instance of a resolver class; so does this.
    instance ??= new (def.target as new () => object)();
    return method.apply(instance, values);
  };
  field.resolve = direct;
}

/** How to read one parameter directly, or undefined when TypeGraphQL must always give it. */
function readerOf(param: ParamMetadata): ParamReader | undefined {
  switch (param.kind) {
    case 'info':
      return (_root, _args, _context, info) => info;
    case 'context': {
      const { propertyName } = param;
      return propertyName === undefined ? (_root, _args, context) => context : (_root, _args, context) => (context as Record<string, unknown>)[propertyName];
    }
    case 'root': {
      if (param.propertyName !== undefined) return undefined;
      const { getType } = param;
      if (!getType) return (root) => root;
      // TypeGraphQL makes the root an instance of the declared class; one already is passes as it is.
      return (root) => {
        const declared = getType();
        return root === null || root === undefined || typeof declared !== 'function' || root instanceof declared ? root : NOT_DIRECT;
      };
    }
    case 'arg': {
      if (param.typeOptions.array || param.validateFn) return undefined;
      const { name } = param;
      // A scalar's value passes TypeGraphQL's conversion and validation unchanged; an object would not.
      return (_root, args) => {
        const value = args[name];
        return value !== null && typeof value === 'object' ? NOT_DIRECT : value;
      };
    }
    default:
      return undefined;
  }
}
