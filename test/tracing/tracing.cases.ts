import { randomBytes, randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, sep } from 'node:path';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { createTestDatabase, migratedDataDir, type TestDatabase } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess } from '../helpers/gateway-process';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/wait';
import { DATABASE_BOUND } from '../helpers/app';

/**
 * Traces (docs/contract.md §10): the gateway as a process (src/main.ts, as `npm start` runs it)
 * exporting to a real OTLP/HTTP receiver started here, every span decoded as it arrived. With
 * DATABASE_URL and REDIS_URL, on PostgreSQL with its limiter on Redis; else embedded.
 */
const SERVICES = Boolean(process.env.DATABASE_URL);
const INTERNAL = 1;
const SERVER = 2;
const PG = '@opentelemetry/instrumentation-pg';
const IOREDIS = '@opentelemetry/instrumentation-ioredis';
const QUERY = 'query TracedPet { pet(id: 1) { name category { name } } }';

let program: GatewayProgram;
let receiver: OtlpReceiver;
let dataDirs: string;
let template: string | undefined;
let database: TestDatabase | undefined;
beforeAll(async () => {
  program = GatewayProgram.transpile();
  receiver = await startOtlpReceiver();
  dataDirs = mkdtempSync(join(tmpdir(), 'gateway-data-'));
  if (SERVICES) database = await createTestDatabase();
  else template = await migratedDataDir(join(dataDirs, 'template'));
});
afterAll(async () => {
  await receiver.close();
  await database?.close();
  program.remove();
  rmSync(dataDirs, { recursive: true, force: true });
});

interface Running {
  url: string;
  child: GatewayProcess;
  /** The JSON lines it has written so far. */
  lines: Record<string, any>[];
  /** SIGTERM; resolves with what it wrote on stderr once it exited. */
  stop(): Promise<string>;
}

/** The gateway as a process: none of the caller's OTEL_* variables, only those of `env`. */
async function startGateway(env: NodeJS.ProcessEnv): Promise<Running> {
  const inherited = Object.fromEntries(Object.keys(process.env).filter((name) => name.startsWith('OTEL_')).map((name) => [name, undefined]));
  let place: NodeJS.ProcessEnv;
  if (database) {
    place = { DATABASE_URL: database.url, REDIS_URL: process.env.REDIS_URL, REDIS_KEY_PREFIX: `tracing:${randomUUID()}:` };
  } else {
    const dataDir = template ? join(dataDirs, randomUUID()) : 'memory://';
    if (template) cpSync(template, dataDir, { recursive: true });
    place = { PGLITE_DATA_DIR: dataDir };
  }
  // Request lines are written within 10 ms (the least allowed), not a second: the tests read trace ids from them.
  // Each request's SQL is traced: none is answered from the response cache.
  const child = program.start({ ...inherited, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', LOG_FLUSH_MS: '10', ...DATABASE_BOUND, ...place, ...env });
  const ended = completion(child);
  const lines: Record<string, any>[] = [];
  let seen = '';
  const url = await new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const printed = /Pet Store gateway: (http:\/\/\S+)\/graphql/.exec(seen);
      if (printed) resolve(printed[1]);
      const complete = seen.lastIndexOf('\n');
      for (const line of seen.slice(0, complete + 1).split('\n')) if (line.startsWith('{')) lines.push(JSON.parse(line));
      seen = seen.slice(complete + 1);
    });
    child.once('exit', (code) => reject(new Error(`expected the gateway to start, it exited with ${code}`)));
  });
  return {
    url,
    child,
    lines,
    async stop() {
      child.kill('SIGTERM');
      return (await ended).stderr;
    },
  };
}

/** Sends a GraphQL request; resolves with its body and the trace id its request log line carries. */
async function graphql(gateway: Running, query: string, headers: Record<string, string> = {}) {
  const requestId = randomUUID();
  const response = await fetch(`${gateway.url}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-request-id': requestId, ...headers },
    body: JSON.stringify({ query }),
  });
  const body: any = await response.json();
  expect(response.status).toBe(200);
  let line: Record<string, any> | undefined;
  await waitFor(() => Boolean((line = gateway.lines.find((entry) => entry.requestId === requestId))), 10_000, 'the request log line');
  return { body, traceId: line?.traceId as string | undefined, line: line! };
}

/** The spans of one trace, once its HTTP span has arrived (its children end, and are sent, first). */
async function traceOf(traceId: string, root = (span: ReceivedSpan) => span.kind === SERVER): Promise<ReceivedSpan[]> {
  const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
  await waitFor(() => spans().some(root), 10_000, `the root span of trace ${traceId}`);
  return spans();
}

const withRedis = (spans: ReceivedSpan[]) => spans.filter((span) => span.scope === IOREDIS);

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let gateway: Running;
  beforeAll(async () => {
    gateway = await startGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'petstore-under-test',
      // Spans are sent within 20 ms of ending rather than 5 s.
      OTEL_BSP_SCHEDULE_DELAY: '20',
    });
  });
  afterAll(() => gateway?.stop());

  it('makes each request one trace: the HTTP span its root, the operation, its SQL and Redis calls its children', async () => {
    const first = await graphql(gateway, QUERY);
    const second = await graphql(gateway, QUERY);
    expect(first.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(second.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(second.traceId).not.toBe(first.traceId);
    for (const { body, traceId } of [first, second]) {
      const spans = await traceOf(traceId!);
      const [root, ...others] = spans.filter((span) => !span.parentSpanId);
      expect(others).toEqual([]);
      // The HTTP server span by OpenTelemetry's HTTP conventions: what a backend shows and filters on.
      expect(root).toMatchObject({ kind: SERVER, name: 'POST /graphql', status: {} });
      const { host, port } = new URL(gateway.url);
      expect(root.attributes).toMatchObject({
        'http.request.method': 'POST',
        'http.route': '/graphql',
        'http.response.status_code': 200,
        'url.scheme': 'http',
        'url.path': '/graphql',
        'server.address': host.replace(/:\d+$/, ''),
        'server.port': Number(port),
        'client.address': '127.0.0.1',
        'network.peer.address': '127.0.0.1',
        'network.protocol.version': '1.1',
      });
      expect(root.attributes['url.query']).toBeUndefined();
      expect(root.resource['service.name']).toBe('petstore-under-test');

      const operation = spans.find((span) => span.kind === INTERNAL);
      expect(operation).toMatchObject({ name: 'query TracedPet', parentSpanId: root.spanId });
      expect(operation?.attributes).toEqual({
        'graphql.operation.type': 'query',
        'graphql.operation.name': 'TracedPet',
        'graphql.cost.requested': body.extensions.cost.requested,
        'graphql.cost.actual': body.extensions.cost.actual,
      });

      const statements = spans.filter((span) => span.scope === PG && span.attributes['db.query.text'] !== undefined);
      expect(statements.some((span) => /FROM pets/.test(String(span.attributes['db.query.text'])))).toBe(true);
      for (const span of spans.filter((each) => each !== root)) expect(span.parentSpanId).toBe(root.spanId);
      // The limiter counts the request in Redis when there is one; embedded, it counts in memory.
      if (SERVICES) expect(withRedis(spans).length).toBeGreaterThan(0);
      else expect(withRedis(receiver.spans)).toEqual([]);
    }
  });

  it("continues a caller's trace: W3C traceparent honoured on the way in", async () => {
    const traceId = randomBytes(16).toString('hex');
    const parent = randomBytes(8).toString('hex');
    const sent = await graphql(gateway, QUERY, { traceparent: `00-${traceId}-${parent}-01` });
    expect(sent.traceId).toBe(traceId);
    const spans = await traceOf(traceId);
    const root = spans.find((span) => span.kind === SERVER);
    expect(root?.parentSpanId).toBe(parent);
    expect(spans.filter((span) => span.parentSpanId === parent)).toEqual([root]);
    expect(spans.find((span) => span.kind === INTERNAL)?.parentSpanId).toBe(root?.spanId);
  });

  it('keeps what a client typed out of the spans: GET variables redacted, Redis commands without their keys', async () => {
    const variables = JSON.stringify({ id: '1' });
    const params = new URLSearchParams({ query: 'query TracedGet($id: ID!) { pet(id: $id) { name } }', variables });
    const response = await fetch(`${gateway.url}/graphql?${params}`, { headers: { 'apollo-require-preflight': 'true' } });
    expect(response.status).toBe(200);
    let root: ReceivedSpan | undefined;
    await waitFor(() => Boolean((root = receiver.spans.find((span) => span.kind === SERVER && String(span.attributes['url.query']).includes('TracedGet')))), 10_000, 'the GET request span');
    expect(new URLSearchParams(String(root?.attributes['url.query'])).get('variables')).toBe('REDACTED');
    for (const span of withRedis(receiver.spans)) {
      expect(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])).toMatch(/^[a-z]+$/);
    }
  });

  it('names a request outside GraphQL by its method alone, a 4xx not in error, the client the one its proxy names', async () => {
    const response = await fetch(`${gateway.url}/nowhere?page=2`, { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } });
    expect(response.status).toBe(404);
    let root: ReceivedSpan | undefined;
    await waitFor(() => Boolean((root = receiver.spans.find((span) => span.attributes['url.path'] === '/nowhere'))), 10_000, 'the request span');
    expect(root).toMatchObject({ kind: SERVER, name: 'GET', parentSpanId: undefined, status: {} });
    expect(root?.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 404, 'url.query': 'page=2', 'client.address': '203.0.113.7' });
    expect(root?.attributes['http.route']).toBeUndefined();
  });

  it('makes each subscribe over WebSocket a trace of its own, the operation its root', async () => {
    const client = createClient({ url: `${gateway.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, onNonLazyError: () => undefined });
    try {
      client.subscribe({ query: 'subscription TracedStock { inventoryChanged(petIds: ["1"]) { quantity } }' }, { next: () => {}, error: () => {}, complete: () => {} });
      let root: ReceivedSpan | undefined;
      await waitFor(() => Boolean((root = receiver.spans.find((span) => span.name === 'subscription TracedStock'))), 10_000, 'the subscription span');
      expect(root).toMatchObject({ kind: SERVER, parentSpanId: undefined, scope: 'petstore-gateway', status: {} });
      expect(root?.attributes).toEqual({ 'graphql.operation.type': 'subscription', 'graphql.operation.name': 'TracedStock' });
      const children = receiver.spans.filter((span) => span.traceId === root?.traceId && span !== root);
      for (const child of children) expect(child.parentSpanId).toBe(root?.spanId);
      // Its slot and its count in the caller's windows.
      if (SERVICES) expect(withRedis(children).length).toBeGreaterThan(0);
    } finally {
      await client.dispose();
    }
  });

  it('starts no trace for probes and scrapes, nor for the statements no request made', async () => {
    for (const path of ['/healthz', '/readyz', '/metrics']) expect((await fetch(`${gateway.url}${path}`)).status).toBe(200);
    const { traceId } = await graphql(gateway, QUERY);
    await traceOf(traceId!);
    expect(receiver.spans.filter((span) => /healthz|readyz|metrics/.test(String(span.attributes['url.path'])))).toEqual([]);
    const traces = new Set(receiver.spans.map((span) => span.traceId));
    const rooted = new Set(receiver.spans.filter((span) => span.kind === SERVER).map((span) => span.traceId));
    expect([...traces].filter((trace) => !rooted.has(trace))).toEqual([]);
  });
});

describe('with a sampler that leaves requests out (OTEL_TRACES_SAMPLER)', () => {
  const traced = (env: NodeJS.ProcessEnv) =>
    startGateway({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json', OTEL_BSP_SCHEDULE_DELAY: '20', ...env });

  it('records a sampled request whole and an unsampled one not at all: no span of any kind, no trace id in its log line', async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-ratio', OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.5' });
    try {
      const sent = [];
      for (let i = 0; i < 24; i += 1) sent.push(await graphql(gateway, QUERY));
      const sampled = sent.filter((request) => request.traceId !== undefined);
      // Each request is a coin toss: all 24 landing on one side is a chance of one in eight million.
      expect(sampled.length).toBeGreaterThan(0);
      expect(sampled.length).toBeLessThan(sent.length);
      for (const { traceId } of sampled) {
        const spans = await traceOf(traceId!);
        expect(spans.filter((span) => !span.parentSpanId).map(({ kind, name }) => ({ kind, name }))).toEqual([{ kind: SERVER, name: 'POST /graphql' }]);
        expect(spans.find((span) => span.kind === INTERNAL)?.name).toBe('query TracedPet');
        expect(spans.some((span) => span.scope === PG)).toBe(true);
      }
      for (const { line } of sent.filter((request) => request.traceId === undefined)) expect(line.spanId).toBeUndefined();
      // The last sampled trace has arrived whole: every span this gateway sent belongs to a sampled request.
      const ours = new Set(sampled.map((request) => request.traceId));
      const sentByIt = receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-ratio');
      expect(sentByIt.filter((span) => !ours.has(span.traceId))).toEqual([]);
    } finally {
      await gateway.stop();
    }
  });

  it("follows the caller's decision under a parent-based sampler: traceparent's flags say whether a request is recorded", async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-parent', OTEL_TRACES_SAMPLER: 'parentbased_always_off' });
    try {
      const recorded = randomBytes(16).toString('hex');
      const declined = randomBytes(16).toString('hex');
      const parent = randomBytes(8).toString('hex');
      const own = await graphql(gateway, QUERY);
      const yes = await graphql(gateway, QUERY, { traceparent: `00-${recorded}-${parent}-01` });
      const no = await graphql(gateway, QUERY, { traceparent: `00-${declined}-${parent}-00` });
      expect(own.traceId).toBeUndefined();
      expect(yes.traceId).toBe(recorded);
      expect(no.traceId).toBeUndefined();
      await traceOf(recorded);
      const sentByIt = receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-parent');
      expect(new Set(sentByIt.map((span) => span.traceId))).toEqual(new Set([recorded]));
    } finally {
      await gateway.stop();
    }
  });

  it('makes no span at all for a request or a subscribe over WebSocket the sampler leaves out (always_off): no HTTP, operation, SQL or Redis span', async () => {
    const gateway = await traced({ OTEL_SERVICE_NAME: 'petstore-unsampled', OTEL_TRACES_SAMPLER: 'always_off' });
    const client = createClient({ url: `${gateway.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, onNonLazyError: () => undefined });
    try {
      for (let i = 0; i < 3; i += 1) {
        const { body, traceId, line } = await graphql(gateway, QUERY);
        expect(body.errors).toBeUndefined();
        expect(traceId).toBeUndefined();
        expect(line.spanId).toBeUndefined();
      }
      let subscribed = false;
      client.subscribe({ query: 'subscription UntracedStock { inventoryChanged(petIds: ["1"]) { quantity } }' }, { next: () => {}, error: () => {}, complete: () => {} });
      // The subscription counts as active once its subscribe has run.
      await waitFor(async () => (subscribed = /petstore_live_subscriptions\{[^}]*\} [1-9]/.test(await (await fetch(`${gateway.url}/metrics`)).text())), 10_000, 'the subscription');
      expect(subscribed).toBe(true);
    } finally {
      await client.dispose();
      await gateway.stop();
    }
    // Spans end before the process does, and the SDK sends what it holds on SIGTERM.
    expect(receiver.spans.filter((span) => span.resource['service.name'] === 'petstore-unsampled')).toEqual([]);
  });
});

describe('with no OTEL_* variable set', () => {
  it('loads no tracing code, and its request log carries no trace id', async () => {
    // Lists, as the process exits, every module it loaded.
    const probe = join(dataDirs, 'loaded-modules.js');
    writeFileSync(probe, "process.on('exit', () => process.stderr.write('\\nLOADED ' + JSON.stringify(Object.keys(require.cache)) + '\\n'));\n");
    const gateway = await startGateway({ NODE_OPTIONS: `--require ${probe}` });
    let stderr = '';
    try {
      const { body, traceId, line } = await graphql(gateway, QUERY);
      expect(body.errors).toBeUndefined();
      expect(traceId).toBeUndefined();
      expect(line.spanId).toBeUndefined();
    } finally {
      stderr = await gateway.stop();
    }
    const loaded: string[] = JSON.parse(/^LOADED (.*)$/m.exec(stderr)![1]);
    expect(loaded.some((path) => path.endsWith(`${sep}src${sep}gateway.js`))).toBe(true);
    // prom-client requires the API package (a no-op without an SDK) for its process metrics.
    expect(loaded.filter((path) => /[\\/]@opentelemetry[\\/]/.test(path) && !/[\\/]@opentelemetry[\\/]api[\\/]/.test(path))).toEqual([]);
    expect(loaded.filter((path) => path.includes(`${sep}telemetry${sep}`)).map((path) => path.split(sep).pop()).sort()).toEqual(['index.js', 'start.js']);
  });
});
