import { type Client, createClient } from 'graphql-ws';
import WebSocket from 'ws';
import { CHANGES_CHANNEL } from '../../src/sql/notify';
import type { TestApp } from './app';
import { waitFor } from './wait';

/** ws://127.0.0.1:<port>/graphql of an app. */
export const wsUrl = (t: TestApp) => `${t.url.replace(/^http/, 'ws')}/graphql`;

/** A real graphql-ws client, as Apollo Client's GraphQLWsLink uses, connected at once. */
export function liveClient(t: TestApp, key?: string): Client {
  return createClient({
    url: wsUrl(t),
    webSocketImpl: WebSocket,
    connectionParams: key ? { 'X-API-Key': key } : undefined,
    lazy: false,
    retryAttempts: 0,
    onNonLazyError: () => undefined,
  });
}

export interface Feed<T = any> {
  /** Every `next` payload so far. */
  events: { data?: T; errors?: any[] }[];
  /** The errors of an `error` message, once one came. */
  error?: any;
  completed: boolean;
  /** Resolves when `count` events have come (or the error, or completion); rejects after `ms`. */
  until(count: number, ms?: number): Promise<void>;
  stop(): void;
}

/** Subscribes and records what comes. */
export function subscribe<T = any>(client: Client, query: string, variables?: Record<string, unknown>): Feed<T> {
  const waiters = new Set<() => void>();
  const wake = () => waiters.forEach((waiter) => waiter());
  const feed: Feed<T> = {
    events: [],
    completed: false,
    until(count, ms = 5_000) {
      return new Promise<void>((resolve, reject) => {
        const check = () => {
          if (feed.events.length >= count || feed.error || feed.completed) {
            clearTimeout(timer);
            waiters.delete(check);
            resolve();
          }
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} events within ${ms} ms, got ${feed.events.length}: ${JSON.stringify(feed.events)}`));
        }, ms);
        waiters.add(check);
        check();
      });
    },
    stop: () => undefined,
  };
  feed.stop = client.subscribe<T>(
    { query, variables },
    {
      next: (value) => {
        feed.events.push(value as { data?: T });
        wake();
      },
      error: (error) => {
        feed.error = error;
        wake();
      },
      complete: () => {
        feed.completed = true;
        wake();
      },
    },
  );
  return feed;
}

/** Active subscriptions on an app, as its metrics count them. */
export async function activeSubscriptions(t: TestApp): Promise<number> {
  const metric = await t.app.metrics.registry.getSingleMetric('petstore_live_subscriptions')?.get();
  return (metric?.values ?? []).reduce((sum, { value }) => sum + value, 0);
}

/** Waits until the condition holds (test/helpers/wait.ts). */
export const eventually = (condition: () => Promise<boolean> | boolean, ms = 10_000) => waitFor(condition, ms, 'the condition', 20);

/** Waits until `count` subscriptions are active on the app (they then receive every later event). */
export const subscribed = (t: TestApp, count: number) => eventually(async () => (await activeSubscriptions(t)) >= count);

/**
 * Waits until the app has received every change committed so far, so that a subscription made
 * next sees none of them: NOTIFY delivers in commit order, so a marker sent now comes after them.
 */
export async function caughtUp(t: TestApp): Promise<void> {
  const marker = t.app.services.live.hub.stockChanges(['0']);
  await t.db.dataSource.query('SELECT pg_notify($1, $2)', [CHANGES_CHANNEL, JSON.stringify({ type: 'stock', petId: '0', quantity: 0, status: 'sold' })]);
  await marker.next();
  await marker.return?.();
}

/**
 * The clients and subscriptions one test opens, tracked so that `closeAll()` (in an afterEach)
 * stops every subscription and closes every socket it opened.
 */
export function liveSession() {
  const clients: Client[] = [];
  const feeds: Feed[] = [];
  return {
    clients,
    feeds,
    client(t: TestApp, key?: string): Client {
      const opened = liveClient(t, key);
      clients.push(opened);
      return opened;
    },
    watch(on: Client, query: string, variables?: Record<string, unknown>): Feed {
      const feed = subscribe(on, query, variables);
      feeds.push(feed);
      return feed;
    },
    async closeAll(): Promise<void> {
      feeds.splice(0).forEach((feed) => feed.stop());
      await Promise.all(clients.splice(0).map((client) => client.dispose()));
    },
  };
}
