import type { GraphQLRequestContextDidResolveOperation } from '@apollo/server';
import { type DocumentNode, Kind, type ValueNode, visit } from 'graphql';
import { badInput } from '../errors';
import type { SharedRequestHooks } from './request-hooks';

const UNPAIRED_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/**
 * False for what a PostgreSQL text value cannot hold: NUL, which the server refuses (a 500
 * before this check), and a UTF-16 surrogate without its pair, which the driver would silently
 * store as U+FFFD.
 */
export const isStorableText = (text: string): boolean => !text.includes('\u0000') && !UNPAIRED_SURROGATE.test(text);

/** Where the document's inputs stand: the first unstorable literal, and each variable's argument. */
interface DocumentInputs {
  badLiteral?: string;
  argumentOfVariable: Map<string, string>;
}

/**
 * Refuses, before execution, any string argument, input field or variable that the database
 * could not store faithfully: 400 BAD_USER_INPUT naming the argument (docs/contract.md §6).
 * Checking the inputs as they arrive covers every resolver, present and future.
 */
export function textInputHooks<TContext extends object>(): SharedRequestHooks<TContext> {
  const scanned = new WeakMap<DocumentNode, DocumentInputs>();
  return {
    async didResolveOperation({ document, operation, request }: GraphQLRequestContextDidResolveOperation<TContext>) {
      if (!operation) return;
      let inputs = scanned.get(document);
      if (!inputs) {
        inputs = scanDocument(document);
        scanned.set(document, inputs);
      }
      if (inputs.badLiteral) throw refusal(`argument ${inputs.badLiteral}`);
      for (const definition of operation.variableDefinitions ?? []) {
        const name = definition.variable.name.value;
        const at = unstorablePath(request.variables?.[name], '');
        if (at === undefined) continue;
        const argument = inputs.argumentOfVariable.get(name);
        throw refusal(argument ? `argument ${argument} (variable $${name}${at})` : `variable $${name}${at}`);
      }
    },
  };
}

function refusal(where: string) {
  return badInput(`${where}: expected text without NUL characters (\\u0000) or unpaired surrogates`);
}

function scanDocument(document: DocumentNode): DocumentInputs {
  const inputs: DocumentInputs = { argumentOfVariable: new Map() };
  const walk = (value: ValueNode, path: string): void => {
    switch (value.kind) {
      case Kind.STRING:
        if (inputs.badLiteral === undefined && !isStorableText(value.value)) inputs.badLiteral = path;
        break;
      case Kind.VARIABLE:
        if (!inputs.argumentOfVariable.has(value.name.value)) inputs.argumentOfVariable.set(value.name.value, path);
        break;
      case Kind.LIST:
        for (const item of value.values) walk(item, path);
        break;
      case Kind.OBJECT:
        for (const field of value.fields) walk(field.value, `${path}.${field.name.value}`);
        break;
      default:
    }
  };
  visit(document, {
    Argument(node) {
      walk(node.value, node.name.value);
    },
    VariableDefinition(node) {
      if (node.defaultValue) walk(node.defaultValue, `$${node.variable.name.value}`);
    },
  });
  return inputs;
}

/** The path within a variable's JSON value to its first unstorable string, if any. */
function unstorablePath(value: unknown, path: string): string | undefined {
  if (typeof value === 'string') return isStorableText(value) ? undefined : path;
  if (Array.isArray(value)) {
    for (const [index, item] of value.entries()) {
      const found = unstorablePath(item, `${path}[${index}]`);
      if (found !== undefined) return found;
    }
  } else if (value !== null && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) {
      const found = unstorablePath(item, `${path}.${key}`);
      if (found !== undefined) return found;
    }
  }
  return undefined;
}
