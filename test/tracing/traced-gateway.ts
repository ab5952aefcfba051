import { randomUUID } from 'node:crypto';
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createTestDatabase, migratedDataDir, type TestDatabase } from '../helpers/database';
import { completion, GatewayProgram, type GatewayProcess } from '../helpers/gateway-process';
import { type OtlpReceiver, type ReceivedSpan, startOtlpReceiver } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/wait';
import { DATABASE_BOUND } from '../helpers/app';

/**
 * Traces (docs/contract.md §10): the gateway as a process (src/main.ts, as `npm start` runs it)
 * exporting to a real OTLP/HTTP receiver started here, every span decoded as it arrived. With
 * DATABASE_URL and REDIS_URL, on PostgreSQL with its limiter on Redis; else embedded. Shared by
 * tracing.slow.cases.ts (one exporting gateway) and sampling.slow.cases.ts (a gateway per
 * sampler), both in `npm run test:slow`.
 */
export const SERVICES = Boolean(process.env.DATABASE_URL);
export const INTERNAL = 1;
export const SERVER = 2;
export const PG = '@opentelemetry/instrumentation-pg';
export const IOREDIS = '@opentelemetry/instrumentation-ioredis';
export const QUERY = 'query TracedPet { pet(id: 1) { name category { name } } }';

export interface Running {
  url: string;
  child: GatewayProcess;
  /** The JSON lines it has written so far. */
  lines: Record<string, any>[];
  /** SIGTERM; resolves with what it wrote on stderr once it exited. */
  stop(): Promise<string>;
}

export interface TracedGateways {
  /** The receiver every gateway exports to (set once the file's hooks ran). */
  readonly receiver: OtlpReceiver;
  /** A folder of the file's own, removed after it. */
  readonly dataDirs: string;
  /** The gateway as a process: none of the caller's OTEL_* variables, only those of `env`. */
  startGateway(env: NodeJS.ProcessEnv): Promise<Running>;
  /** Sends a GraphQL request; resolves with its body and the trace id its request log line carries. */
  graphql(gateway: Running, query: string, headers?: Record<string, string>): Promise<{ body: any; traceId: string | undefined; line: Record<string, any> }>;
  /** The spans of one trace, once its HTTP span has arrived (its children end, and are sent, first). */
  traceOf(traceId: string, root?: (span: ReceivedSpan) => boolean): Promise<ReceivedSpan[]>;
}

/** Registers the calling file's hooks: the gateway transpiled, the receiver started, a database to start gateways on. */
export function useTracedGateways(): TracedGateways {
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

  async function traceOf(traceId: string, root = (span: ReceivedSpan) => span.kind === SERVER): Promise<ReceivedSpan[]> {
    const spans = () => receiver.spans.filter((span) => span.traceId === traceId);
    await waitFor(() => spans().some(root), 10_000, `the root span of trace ${traceId}`);
    return spans();
  }

  return {
    get receiver() {
      return receiver;
    },
    get dataDirs() {
      return dataDirs;
    },
    startGateway,
    graphql,
    traceOf,
  };
}

export const withRedis = (spans: ReceivedSpan[]) => spans.filter((span) => span.scope === IOREDIS);
