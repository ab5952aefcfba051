import { ApolloClient, HttpLink, InMemoryCache, gql, split } from '@apollo/client';
import { GraphQLWsLink } from '@apollo/client/link/subscriptions';
import { getMainDefinition } from '@apollo/client/utilities';
import { createClient } from 'graphql-ws';
import { firstValueFrom, filter } from 'rxjs';
import WebSocket from 'ws';
import { startTestApp, type TestApp } from '../helpers/app';
import { createApiKey, setStock, stockedPet } from '../helpers/builders';
import { caughtUp, subscribed, wsUrl } from '../helpers/live';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** A front end's client as docs/live-updates.md shows it: HTTP and WebSocket behind a split link. */
function frontEnd(key: string) {
  const socket = createClient({ url: wsUrl(t), webSocketImpl: WebSocket, connectionParams: { 'X-API-Key': key }, retryAttempts: 0 });
  const client = new ApolloClient({
    link: split(
      ({ query }) => {
        const definition = getMainDefinition(query);
        return definition.kind === 'OperationDefinition' && definition.operation === 'subscription';
      },
      new GraphQLWsLink(socket),
      new HttpLink({ uri: `${t.url}/graphql`, headers: { 'X-API-Key': key } }),
    ),
    cache: new InMemoryCache({ typePolicies: { InventoryItem: { keyFields: ['petId'] } } }),
  });
  return { client, socket };
}

interface Stock {
  inventoryItem: { petId: string; quantity: number; status: string } | null;
}

it("keeps Apollo Client's cache current: a stock event updates the item a query read", async () => {
  const petId = await stockedPet(t, 4);
  const { key } = await createApiKey(t, { plan: 'PRO' });
  const { client, socket } = frontEnd(key);
  const STOCK = gql`query Stock($id: ID!) { inventoryItem(petId: $id) { petId quantity status } }`;
  const read = await client.query<Stock>({ query: STOCK, variables: { id: petId } });
  expect(read.data?.inventoryItem).toEqual({ __typename: 'InventoryItem', petId, quantity: 4, status: 'AVAILABLE' });

  await caughtUp(t);
  const events = client.subscribe<{ inventoryChanged: Stock['inventoryItem'] }>({
    query: gql`subscription Stock($ids: [ID!]) { inventoryChanged(petIds: $ids) { petId quantity status } }`,
    variables: { ids: [petId] },
  });
  const first = firstValueFrom(events.pipe(filter((result) => !!result.data)));
  await subscribed(t, 1);
  await setStock(t, petId, 0);

  expect((await first).data?.inventoryChanged).toEqual({ __typename: 'InventoryItem', petId, quantity: 0, status: 'SOLD' });
  const cached = client.readQuery<Stock>({ query: STOCK, variables: { id: petId } });
  expect(cached?.inventoryItem).toMatchObject({ quantity: 0, status: 'SOLD' });
  await socket.dispose();
});
