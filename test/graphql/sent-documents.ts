import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import {
  type DocumentNode,
  getNamedType,
  type GraphQLSchema,
  Kind,
  parse,
  print,
  TypeInfo,
  validate,
  visit,
  visitWithTypeInfo,
} from 'graphql';
import ts from 'typescript';
import { fencedBlocks, REPOSITORY_ROOT } from '../helpers/docs';

/**
 * The query documents the rest of the suite sends, found statically for the oracle to replay
 * (oracle-replayed.slow.cases.ts): every string and template literal of test/**\/*.ts that parses as an
 * executable GraphQL document, the ```graphql examples of the README and the guides (which the
 * sandbox test sends), and any example in the schema's descriptions. Each is kept once (by its
 * printed form) in the order found, files in path order. Queries are replayed, those that fail
 * validation too (the refusal is an answer like any other); mutations (they change the data),
 * subscriptions (they stream), documents whose answer changes on every request and templates
 * built at run time are counted, each with its reason, and left out.
 */
const SOURCES = ['test sources', 'docs examples', 'schema descriptions'] as const;
export type DocumentSource = (typeof SOURCES)[number];

export interface SentDocument {
  source: DocumentSource;
  /** Where it was first found: a file and line. */
  where: string;
  query: string;
  /** Whether it passes validation; one that does not is replayed too, for the refusal's text. */
  valid: boolean;
}

export interface Collected {
  documents: SentDocument[];
  /** Documents not replayed, by reason: how many, and where the first one is. */
  excluded: Map<string, { count: number; first: string }>;
  /** Distinct documents found, by source, replayed or not. */
  found: Map<DocumentSource, number>;
}

/** The oracle's own files: what they send, it already holds. */
const ORACLE_FILES = new Set(['test/graphql/oracle.ts', 'test/graphql/oracle.cases.ts', 'test/graphql/oracle-documents.ts']);

/** Root fields whose answer differs on every request by design. */
const CHANGING_FIELDS: Record<string, string> = {
  rateLimit: 'its answer changes on every request (rateLimit: the quota each request spends)',
};

/** Stands for an id written into a template at run time; replaced by an existing id. */
const ID_MARK = '__oracle_id__';

interface Candidate {
  source: DocumentSource;
  where: string;
  /** The text; or, for a template that cannot be read statically, its shape (each substitution a 0) and why. */
  text: string | { shape: string; reason: string };
}

export function collectSentDocuments(schema: GraphQLSchema, existingId: string): Collected {
  const collected: Collected = { documents: [], excluded: new Map(), found: new Map(SOURCES.map((source) => [source, 0])) };
  const seen = new Set<string>();
  const exclude = (reason: string, where: string) => {
    const entry = collected.excluded.get(reason);
    if (entry) entry.count += 1;
    else collected.excluded.set(reason, { count: 1, first: where });
  };
  for (const candidate of [...testSourceCandidates(), ...docsCandidates(), ...descriptionCandidates()]) {
    const text = typeof candidate.text === 'string' ? candidate.text : candidate.text.shape;
    const document = executable(text);
    if (!document) continue;
    const printed = print(document);
    if (seen.has(printed)) continue;
    seen.add(printed);
    collected.found.set(candidate.source, (collected.found.get(candidate.source) ?? 0) + 1);
    if (typeof candidate.text !== 'string') {
      exclude(candidate.text.reason, candidate.where);
      continue;
    }
    const query = text.replaceAll(ID_MARK, existingId);
    const reason = exclusion(schema, document);
    if (reason) exclude(reason, candidate.where);
    else collected.documents.push({ source: candidate.source, where: candidate.where, query, valid: validate(schema, parse(query)).length === 0 });
  }
  return collected;
}

/** The document `text` is, when it parses and defines at least one operation and nothing but executable definitions. */
function executable(text: string): DocumentNode | undefined {
  let document: DocumentNode;
  try {
    document = parse(text);
  } catch {
    return undefined;
  }
  const executableOnly = document.definitions.every((definition) => definition.kind === Kind.OPERATION_DEFINITION || definition.kind === Kind.FRAGMENT_DEFINITION);
  return executableOnly && document.definitions.some((definition) => definition.kind === Kind.OPERATION_DEFINITION) ? document : undefined;
}

/** Why a document is not replayed, if it is not: `document` as written, with ID_MARK where an id was substituted. */
function exclusion(schema: GraphQLSchema, document: DocumentNode): string | undefined {
  const operations = document.definitions.filter((definition) => definition.kind === Kind.OPERATION_DEFINITION);
  if (operations.some((operation) => operation.operation === 'mutation')) return 'a mutation: it changes the data';
  if (operations.some((operation) => operation.operation === 'subscription')) return 'a subscription: it streams';
  if (operations.length > 1) return 'several operations: the client names one to run';
  const typeInfo = new TypeInfo(schema);
  let reason: string | undefined;
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(field) {
        if (typeInfo.getParentType() === schema.getQueryType() && CHANGING_FIELDS[field.name.value]) reason ??= CHANGING_FIELDS[field.name.value];
      },
      StringValue(value) {
        if (value.value.includes(ID_MARK) && (value.value !== ID_MARK || getNamedType(typeInfo.getInputType())?.name !== 'ID')) reason ??= 'built at run time: a substitution that is not an id';
      },
    }),
  );
  return reason;
}

/** A quote followed by what a document starts with: a selection set or an operation's keyword. */
const MAY_HOLD_DOCUMENTS = /[`'"]\s*(?:\{|query\b|mutation\b|subscription\b|fragment\b)/;

/** Every test source but the oracle's own, in path order. */
function testSources(dir = join(REPOSITORY_ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .sort((a, b) => a.name.localeCompare(b.name))
    .flatMap((entry) => (entry.isDirectory() ? testSources(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : []))
    .filter((path) => !ORACLE_FILES.has(relative(REPOSITORY_ROOT, path)));
}

/**
 * The string and template literals of the test sources. A template's substitution is read when it
 * names a constant of the same file written as a literal, or stands inside a GraphQL string (an
 * id the test made: the oracle's own id takes its place, if the string is indeed an ID); any other
 * leaves the template unresolved.
 */
function testSourceCandidates(): Candidate[] {
  return testSources().flatMap((path) => {
    const file = relative(REPOSITORY_ROOT, path);
    const text = readFileSync(path, 'utf8');
    // Only files with a literal that may open a document are parsed: half of them, half the time.
    if (!MAY_HOLD_DOCUMENTS.test(text)) return [];
    const source = ts.createSourceFile(path, text, ts.ScriptTarget.ES2022, false);
    const constants = literalConstants(source);
    const candidates: Candidate[] = [];
    const where = (node: ts.Node) => `${file}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;
    const walk = (node: ts.Node) => {
      if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) candidates.push({ source: 'test sources', where: where(node), text: node.text });
      else if (ts.isTemplateExpression(node)) candidates.push(templateCandidate(node, constants, where(node)));
      ts.forEachChild(node, walk);
    };
    walk(source);
    return candidates;
  });
}

/** The constants of a file whose value is a literal (or a template of such constants), by name. */
function literalConstants(source: ts.SourceFile): Map<string, ts.Expression> {
  const constants = new Map<string, ts.Expression>();
  const walk = (node: ts.Node) => {
    if (ts.isVariableDeclarationList(node) && node.flags & ts.NodeFlags.Const) {
      for (const declaration of node.declarations) if (ts.isIdentifier(declaration.name) && declaration.initializer) constants.set(declaration.name.text, declaration.initializer);
    }
    ts.forEachChild(node, walk);
  };
  walk(source);
  return constants;
}

/** A constant's text, when it is a literal or a template of such constants. */
function constantText(expression: ts.Expression, constants: Map<string, ts.Expression>, depth = 0): string | undefined {
  if (depth > 8) return undefined;
  if (ts.isStringLiteral(expression) || ts.isNoSubstitutionTemplateLiteral(expression)) return expression.text;
  if (ts.isIdentifier(expression) && constants.has(expression.text)) return constantText(constants.get(expression.text)!, constants, depth + 1);
  if (ts.isTemplateExpression(expression)) {
    let text = expression.head.text;
    for (const span of expression.templateSpans) {
      const part = constantText(span.expression, constants, depth + 1);
      if (part === undefined) return undefined;
      text += part + span.literal.text;
    }
    return text;
  }
  return undefined;
}

function templateCandidate(template: ts.TemplateExpression, constants: Map<string, ts.Expression>, where: string): Candidate {
  let text = template.head.text;
  for (const span of template.templateSpans) {
    const constant = constantText(span.expression, constants);
    if (constant !== undefined) text += constant;
    else if (text.endsWith('"') && span.literal.text.startsWith('"')) {
      text += ID_MARK;
    } else {
      // Counted when its shape is a document: a template that is GraphQL whatever the values are.
      const shape = `${template.head.text}${template.templateSpans.map((each) => `0${each.literal.text}`).join('')}`;
      return { source: 'test sources', where, text: { shape, reason: 'built at run time: a value computed by the test (a count, a repeat, a generated selection)' } };
    }
    text += span.literal.text;
  }
  return { source: 'test sources', where, text };
}

/** The README's and the guides' ```graphql examples. */
function docsCandidates(): Candidate[] {
  return fencedBlocks('graphql').map(({ file, text }) => ({ source: 'docs examples', where: file, text }));
}

/** Examples in the descriptions of schema.graphql: fenced blocks and `code` spans. */
function descriptionCandidates(): Candidate[] {
  const candidates: Candidate[] = [];
  const sdl = parse(readFileSync(join(REPOSITORY_ROOT, 'schema.graphql'), 'utf8'));
  visit(sdl, {
    enter(node) {
      const description = 'description' in node ? node.description : undefined;
      if (!description) return;
      const where = `schema.graphql:${description.loc?.startToken.line ?? 0}`;
      for (const match of description.value.matchAll(/```(?:graphql)?\n([\s\S]*?)```|`([^`]+)`/g)) candidates.push({ source: 'schema descriptions', where, text: match[1] ?? match[2] });
    },
  });
  return candidates;
}
