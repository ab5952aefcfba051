import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createClient as createSseClient } from 'graphql-sse';
import { createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { type FanOutReport, type FanOutTransport, PETS_WATCHED, SOCKETS, STAMP_MODULO, SUBSCRIPTIONS_PER_SOCKET } from './fan-out';
import { orderKey } from './fixture';

/**
 * The fan-out bench's subscribers, in processes of their own (this one opens every argv[6]-th of
 * the SOCKETS, from the argv[5]-th): graphql-ws sockets spread over the gateways (argv[2], a JSON list of ports), SUBSCRIPTIONS_PER_SOCKET `inventoryChanged`
 * subscriptions each, every one watching PETS_WATCHED random pets among the first argv[3]. Each
 * socket uses a key of its own. An event's `quantity` is the time its change was sent (ms, modulo
 * 1,000,000), so its latency is read off on arrival. Answers `start` and `stop` over IPC. With
 * argv[4] `sse`, each socket's subscriptions are instead SUBSCRIPTIONS_PER_SOCKET SSE streams
 * (graphql-sse, distinct connections mode) with that key.
 */
const QUERY = 'subscription Stock($p: [ID!]) { inventoryChanged(petIds: $p) { petId quantity } }';

async function main(): Promise<void> {
  const ports = JSON.parse(process.argv[2]) as number[];
  const hotPets = Number(process.argv[3]);
  const transport = (process.argv[4] ?? 'graphql-ws') as FanOutTransport;
  // This process's share of the sockets: every count-th, from index.
  const index = Number(process.argv[5] ?? 0);
  const count = Number(process.argv[6] ?? 1);
  const latencies: number[][] = ports.map(() => []);
  let measuring = false;
  let errors = 0;
  // This process's own CPU while measuring: parsing 1,000 SSE streams must not be what the bench measures.
  let cpuAtStart = process.cpuUsage();
  // How late this process runs its callbacks: a busy client stamps events late, and the bench would charge the gateway.
  const loopDelay = monitorEventLoopDelay({ resolution: 5 });
  const record = (gateway: number) => ({
    next: (result: { data?: { inventoryChanged: { quantity: number } } | null }) => {
      const sent = result.data?.inventoryChanged.quantity;
      if (measuring && sent !== undefined) latencies[gateway].push((Date.now() - sent + STAMP_MODULO) % STAMP_MODULO);
    },
    error: () => (errors += 1),
    complete: () => undefined,
  });
  const watched = () => {
    const pets = new Set<string>();
    while (pets.size < PETS_WATCHED) pets.add(String(1 + Math.floor(Math.random() * hotPets)));
    return { query: QUERY, variables: { p: [...pets] } };
  };
  for (let s = index; s < SOCKETS; s += count) {
    const gateway = s % ports.length;
    if (transport === 'sse') {
      const client = createSseClient({ url: `http://127.0.0.1:${ports[gateway]}/graphql/stream`, headers: { 'X-API-Key': orderKey(s) }, retryAttempts: 0 });
      // A few at a time: a gateway admits only a few streams per address that have not said who they are.
      await Promise.all(
        Array.from({ length: SUBSCRIPTIONS_PER_SOCKET }, () => new Promise<void>((resolve) => {
          const sink = record(gateway);
          client.subscribe(watched(), { ...sink, error: () => (sink.error(), resolve()) }, { connected: () => resolve() });
        })),
      );
      continue;
    }
    const client = createClient({
      url: `ws://127.0.0.1:${ports[gateway]}/graphql`,
      webSocketImpl: WebSocket,
      connectionParams: { 'X-API-Key': orderKey(s) },
      lazy: false,
      retryAttempts: 0,
      onNonLazyError: () => (errors += 1),
    });
    for (let k = 0; k < SUBSCRIPTIONS_PER_SOCKET; k++) client.subscribe(watched(), record(gateway));
    // A gateway admits only a few sockets per address that have not finished connection_init.
    await new Promise<void>((resolve) => {
      client.on('connected', () => resolve());
      client.on('closed', () => resolve());
    });
  }
  await allSubscribed(ports);
  process.on('message', (message: string) => {
    if (message === 'start') {
      latencies.forEach((list) => (list.length = 0));
      measuring = true;
      cpuAtStart = process.cpuUsage();
      loopDelay.reset();
      loopDelay.enable();
      process.send?.({ started: true });
    } else if (message === 'stop') {
      measuring = false;
      const cpu = process.cpuUsage(cpuAtStart);
      loopDelay.disable();
      process.send?.({ report: { latencies, errors, cpuMicros: cpu.user + cpu.system, loopDelayP99: Math.round(loopDelay.percentile(99) / 1e6) } satisfies FanOutReport });
    } else if (message === 'exit') {
      process.exit(0);
    }
  });
  process.send?.({ ready: true });
}

/** Waits until every gateway counts its share of the subscriptions as active. */
async function allSubscribed(ports: number[]): Promise<void> {
  const expected = ports.map((_, i) => Math.ceil((SOCKETS - i) / ports.length) * SUBSCRIPTIONS_PER_SOCKET);
  for (;;) {
    const counts = await Promise.all(
      ports.map(async (port) => {
        const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
        return [...text.matchAll(/^petstore_live_subscriptions\{[^}]*\} (\d+)/gm)].reduce((sum, match) => sum + Number(match[1]), 0);
      }),
    );
    if (counts.every((count, i) => count >= expected[i])) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
