import { Client, type Notification, type PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import type { Logger } from '../logger';
import { parseLsn } from '../sql/lsn';
import { CHANGES_CHANNEL } from '../sql/notify';
import { poolOf } from '../sql/pool';

/** How long a lost listening connection waits before it reconnects. */
export const RELISTEN_DELAY_MS = 1_000;

export interface ChangeListener {
  close(): Promise<void>;
}

/** Told when the stream of changes starts (again) and when it is lost: changes made meanwhile are never heard. */
export interface StreamWatcher {
  joined(): void;
  lost(): void;
}

/**
 * One dedicated connection per instance, LISTENing on the changes channel, straight to PostgreSQL
 * (DATABASE_DIRECT_URL when set: a transaction-mode pooler would hand the session that LISTENs to
 * other clients between transactions, and its notifications to nobody). PostgreSQL hands it
 * every committed change of every instance, in commit order. A lost connection reconnects; the
 * changes committed meanwhile are not replayed (delivery is at most once, docs/contract.md §9).
 * Resolves once the first attempt is over, so that an instance that is up is listening.
 */
export async function listenForChanges(
  url: string,
  onChange: (payload: string, position?: Promise<bigint | undefined>) => void,
  logger: Logger,
  { positions = false, watcher }: { positions?: boolean; watcher?: StreamWatcher } = {},
): Promise<ChangeListener> {
  let client: Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  const connect = async () => {
    const current = new Client({ connectionString: url });
    client = current;
    // With read replicas, each batch of notifications (those read at once) gets the primary's
    // position, read on this connection after they arrived, so past every one of their commits.
    // One statement at a time on the connection: a batch's read starts once the one before it ended.
    let batch: Promise<bigint | undefined> | undefined;
    let reading: Promise<unknown> = Promise.resolve();
    const positionNow = () => {
      if (!batch) {
        batch = reading
          .then(() => current.query<{ lsn: string }>('SELECT pg_current_wal_lsn()::text AS lsn'))
          .then(
            ({ rows }) => parseLsn(rows[0].lsn),
            () => undefined,
          );
        reading = batch;
        setImmediate(() => (batch = undefined));
      }
      return batch;
    };
    current.on('notification', (message: Notification) => {
      if (message.channel === CHANGES_CHANNEL && message.payload) onChange(message.payload, positions ? positionNow() : undefined);
    });
    current.on('error', (error: Error) => logger.debug({ err: error.message }, 'change listener connection error'));
    current.on('end', () => {
      if (closed || client !== current) return;
      watcher?.lost();
      logger.warn('change listener lost its connection; reconnecting');
      retry = setTimeout(() => void connect(), RELISTEN_DELAY_MS);
    });
    try {
      await current.connect();
      await current.query(`LISTEN ${CHANGES_CHANNEL}`);
      if (client === current && !closed) watcher?.joined();
    } catch (error) {
      logger.warn({ err: (error as Error).message }, 'change listener could not connect; retrying');
      await current.end().catch(() => undefined);
    }
  };
  await connect();
  return {
    async close() {
      closed = true;
      clearTimeout(retry);
      await client?.end().catch(() => undefined);
    },
  };
}

/**
 * The embedded PGlite serves all its socket connections from one session, and passes a
 * notification only to the connection whose COMMIT produced it, never to a separate listening
 * one. So the session LISTENs, and the notifications are taken from the pool's own connections.
 * It is still PostgreSQL's NOTIFY: a rolled-back change announces nothing.
 */
export async function listenOnEmbeddedSession(dataSource: DataSource, onChange: (payload: string) => void, watcher?: StreamWatcher): Promise<ChangeListener> {
  const pool = poolOf(dataSource);
  const heard = new WeakSet<PoolClient>();
  let closed = false;
  const onNotification = (message: Notification) => {
    if (!closed && message.channel === CHANGES_CHANNEL && message.payload) onChange(message.payload);
  };
  const hear = (client: PoolClient) => {
    if (heard.has(client)) return;
    heard.add(client);
    client.on('notification', onNotification);
  };
  pool.on('acquire', hear);
  await dataSource.query(`LISTEN ${CHANGES_CHANNEL}`);
  watcher?.joined();
  return {
    async close() {
      closed = true;
      pool.off('acquire', hear);
    },
  };
}
