import { randomBytes } from 'node:crypto';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import type { ReceivedSpan } from '../helpers/otlp-receiver';
import { waitFor } from '../helpers/wait';
import { INTERNAL, PG, QUERY, SERVER, SERVICES, type Running, useTracedGateways, withRedis } from './traced-gateway';

/** Traces of one gateway process exporting to a receiver (traced-gateway.ts); the samplers' cases are in sampling.slow.cases.ts. */
const gateways = useTracedGateways();
const { graphql, startGateway, traceOf } = gateways;

describe('with OTEL_EXPORTER_OTLP_ENDPOINT set', () => {
  let gateway: Running;
  beforeAll(async () => {
    gateway = await startGateway({
      OTEL_EXPORTER_OTLP_ENDPOINT: gateways.receiver.url,
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
      else expect(withRedis(gateways.receiver.spans)).toEqual([]);
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
    await waitFor(() => Boolean((root = gateways.receiver.spans.find((span) => span.kind === SERVER && String(span.attributes['url.query']).includes('TracedGet')))), 10_000, 'the GET request span');
    expect(new URLSearchParams(String(root?.attributes['url.query'])).get('variables')).toBe('REDACTED');
    for (const span of withRedis(gateways.receiver.spans)) {
      expect(String(span.attributes['db.query.text'] ?? span.attributes['db.statement'])).toMatch(/^[a-z]+$/);
    }
  });

  it('names a request outside GraphQL by its method alone, a 4xx not in error, the client the one its proxy names', async () => {
    const response = await fetch(`${gateway.url}/nowhere?page=2`, { headers: { 'x-forwarded-for': '203.0.113.7, 10.0.0.1' } });
    expect(response.status).toBe(404);
    let root: ReceivedSpan | undefined;
    await waitFor(() => Boolean((root = gateways.receiver.spans.find((span) => span.attributes['url.path'] === '/nowhere'))), 10_000, 'the request span');
    expect(root).toMatchObject({ kind: SERVER, name: 'GET', parentSpanId: undefined, status: {} });
    expect(root?.attributes).toMatchObject({ 'http.request.method': 'GET', 'http.response.status_code': 404, 'url.query': 'page=2', 'client.address': '203.0.113.7' });
    expect(root?.attributes['http.route']).toBeUndefined();
  });

  it('makes each subscribe over WebSocket a trace of its own, the operation its root', async () => {
    const client = createClient({ url: `${gateway.url.replace(/^http/, 'ws')}/graphql`, webSocketImpl: WebSocket, lazy: false, retryAttempts: 0, onNonLazyError: () => undefined });
    try {
      client.subscribe({ query: 'subscription TracedStock { inventoryChanged(petIds: ["1"]) { quantity } }' }, { next: () => {}, error: () => {}, complete: () => {} });
      let root: ReceivedSpan | undefined;
      await waitFor(() => Boolean((root = gateways.receiver.spans.find((span) => span.name === 'subscription TracedStock'))), 10_000, 'the subscription span');
      expect(root).toMatchObject({ kind: SERVER, parentSpanId: undefined, scope: 'petstore-gateway', status: {} });
      expect(root?.attributes).toEqual({ 'graphql.operation.type': 'subscription', 'graphql.operation.name': 'TracedStock' });
      const children = gateways.receiver.spans.filter((span) => span.traceId === root?.traceId && span !== root);
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
    expect(gateways.receiver.spans.filter((span) => /healthz|readyz|metrics/.test(String(span.attributes['url.path'])))).toEqual([]);
    const traces = new Set(gateways.receiver.spans.map((span) => span.traceId));
    const rooted = new Set(gateways.receiver.spans.filter((span) => span.kind === SERVER).map((span) => span.traceId));
    expect([...traces].filter((trace) => !rooted.has(trace))).toEqual([]);
  });
});
