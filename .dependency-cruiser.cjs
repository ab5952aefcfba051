/**
 * The parts of src/ and which parts each may import (`npm run lint` runs this through
 * dependency-cruiser). Lower parts never import higher ones, so the parts form no cycle; within a
 * part anything goes, except a cycle that exists at run time. docs/architecture.md describes the
 * same layers in prose.
 */

/** Each part of src/, by path. */
const PARTS = {
  errors: '^src/errors\\.ts$',
  refusals: '^src/refusals\\.ts$',
  formatError: '^src/format-error\\.ts$',
  logger: '^src/logger\\.ts$',
  telemetry: '^src/telemetry/',
  config: '^src/config\\.ts$',
  common: '^src/common/',
  sql: '^src/sql/',
  limits: '^src/limits/',
  auth: '^src/auth/',
  pets: '^src/pets/',
  store: '^src/store/',
  live: '^src/live/',
  cache: '^src/cache/',
  ops: '^src/ops/',
  db: '^src/db/',
  context: '^src/context\\.ts$',
  http: '^src/http/',
  graphql: '^src/graphql/',
  rest: '^src/rest/',
  pipeline: '^src/pipeline/',
  app: '^src/app\\.ts$',
  gateway: '^src/gateway\\.ts$',
  startFailure: '^src/start-failure\\.ts$',
  main: '^src/main\\.ts$',
  cli: '^src/cli/',
};

/** Domain-free helpers every part may use. */
const KERNEL = ['errors', 'refusals', 'formatError', 'logger', 'telemetry', 'config', 'common', 'sql'];

/** The parts each part may import, besides its own files. */
const MAY_IMPORT = {
  errors: [],
  // Every refusal (code, status, message, Retry-After) is made of the errors, and names the pool's
  // class bounds as common/fair-turns.ts reports them.
  refusals: ['errors', 'common'],
  // The one formatter of every error, on every transport: it knows refusals, outages and libraries' errors.
  formatError: ['errors', 'refusals', 'logger', 'common', 'sql'],
  // Tracing (docs/contract.md §10) knows nothing of the gateway but the trace a request carries
  // (common/trace.ts); log lines carry its trace id.
  telemetry: ['common'],
  // Log lines carry the trace id, and stacks in the TypeScript sources' lines (common/source-stack.ts).
  logger: ['telemetry', 'common'],
  config: [],
  common: ['errors'],
  sql: ['errors', 'common'],
  // The limiter takes callers, quotas and contexts as plain structural types.
  limits: [...KERNEL],
  // Keys, roles, plans and the caller; plans give quotas in the limiter's terms.
  auth: [...KERNEL, 'limits'],
  pets: [...KERNEL, 'limits', 'auth'],
  // Orders and stock operations work on pets; pets know nothing of them.
  store: [...KERNEL, 'limits', 'auth', 'pets'],
  // Subscriptions: events of pets, stock and orders, loaded through their features.
  live: [...KERNEL, 'limits', 'auth', 'pets', 'store'],
  // The response cache: its levels and purges, fed by the change stream's payloads.
  cache: [...KERNEL, 'limits', 'live'],
  ops: [...KERNEL],
  // The data source lists the features' entities; features never reach the database set-up.
  db: [...KERNEL, 'auth', 'pets', 'store'],
  // The per-request context: one object satisfying every feature's context interface.
  context: [...KERNEL, 'limits', 'auth', 'pets', 'store', 'live'],
  http: [...KERNEL, 'limits', 'auth', 'ops'],
  graphql: [...KERNEL, 'limits', 'auth', 'pets', 'store', 'live', 'cache', 'context', 'http'],
  rest: [...KERNEL, 'limits', 'auth', 'pets', 'store', 'context', 'http'],
  // The request pipeline: identify → admit → services → the surface (GraphQL, REST, ops) → the writer.
  pipeline: [...KERNEL, 'limits', 'auth', 'ops', 'db', 'context', 'http', 'graphql', 'rest'],
  // Composition: the app, the process and the command-line tools may use anything below them.
  app: [...KERNEL, 'limits', 'auth', 'pets', 'store', 'live', 'cache', 'ops', 'db', 'context', 'http', 'graphql', 'rest', 'pipeline'],
  // The gateway started: database, app, admin key, demo catalogue, HTTP server.
  gateway: [...KERNEL, 'auth', 'db', 'http', 'app'],
  // The one line a process prints when it cannot start, for the gateway and the commands alike.
  startFailure: [...KERNEL, 'db', 'graphql'],
  main: [...KERNEL, 'startFailure', 'limits', 'auth', 'pets', 'store', 'live', 'cache', 'ops', 'db', 'context', 'http', 'graphql', 'rest', 'pipeline', 'app', 'gateway'],
  cli: [...KERNEL, 'startFailure', 'limits', 'auth', 'pets', 'store', 'live', 'ops', 'db', 'context', 'http', 'graphql', 'rest'],
};

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    ...Object.entries(MAY_IMPORT).map(([part, allowed]) => ({
      name: `${part}-imports`,
      comment: `${part} may import only ${allowed.length ? allowed.join(', ') : 'its own files'}`,
      severity: 'error',
      from: { path: PARTS[part] },
      to: { path: '^src/', pathNot: [PARTS[part], ...allowed.map((name) => PARTS[name])] },
    })),
    {
      name: 'not-in-a-part',
      comment: 'every file of src/ belongs to a part listed in .dependency-cruiser.cjs',
      severity: 'error',
      from: { path: '^src/', pathNot: Object.values(PARTS) },
      to: {},
    },
    {
      // A type-only import is erased at compile time: two entities naming each other (a pet and
      // its stock row) form no cycle when the modules load.
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true, viaOnly: { dependencyTypesNot: ['type-only'] } },
    },
    { name: 'not-to-unresolvable', severity: 'error', from: {}, to: { couldNotResolve: true } },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // Type-only imports are arrows too.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    // Resolve packages' subpath exports (graphql-ws/use/ws) as Node does for CommonJS.
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['require', 'node', 'default'] },
  },
};
