import { withTimeout } from '../common/timeout';
import { methodNotAllowed } from '../refusals';
import type { DataSource } from 'typeorm';
import type { ReadReplicas } from '../sql/read-replicas';
import type { Metrics } from './metrics';

/** Readiness waits this long for the database. */
export const READINESS_TIMEOUT_MS = 1_000;

export interface HealthDeps {
  dataSource: DataSource;
  /** Shown in /readyz, never a reason for 503: without them the primary serves the reads. */
  replicas?: ReadReplicas;
  metrics: Metrics;
  /** The limiter store's state: `degraded` while Redis is away and limits are per instance. */
  limiterStatus: () => 'ok' | 'degraded' | 'not configured';
}

/** What an operations route answers: JSON, or text of its own content type. */
export type OpsAnswer = { status: number; json: unknown } | { status: number; text: string; type: string };

async function databaseState(dataSource: DataSource): Promise<{ database: 'ok' | 'down'; migrations: 'ok' | 'pending' | 'unknown' }> {
  try {
    const [{ applied }] = await withTimeout(
      dataSource.query('SELECT count(*)::int AS applied FROM migrations'),
      READINESS_TIMEOUT_MS,
      'readiness check timed out',
    );
    return { database: 'ok', migrations: applied >= dataSource.migrations.length ? 'ok' : 'pending' };
  } catch {
    return { database: 'down', migrations: 'unknown' };
  }
}

const OPS_PATH = /^\/(healthz|readyz|metrics)\/?$/i;

/**
 * Liveness, readiness and metrics: outside the limiter, never rate limited. `match` gives the
 * canonical path of an operations route (the metrics label), or undefined.
 */
export function healthRoutes({ dataSource, replicas, metrics, limiterStatus }: HealthDeps) {
  const answers: Record<string, () => Promise<OpsAnswer> | OpsAnswer> = {
    '/healthz': () => ({ status: 200, json: { status: 'ok' } }),
    '/readyz': async () => {
      const state = await databaseState(dataSource);
      // Redis away is a degradation (limits fall back to per instance), not unreadiness.
      const ready = state.database === 'ok' && state.migrations === 'ok';
      return { status: ready ? 200 : 503, json: { status: ready ? 'ready' : 'unavailable', ...state, redis: limiterStatus(), ...(replicas && { replicas: replicas.status() }) } };
    },
    '/metrics': async () => ({ status: 200, text: await metrics.registry.metrics(), type: metrics.registry.contentType }),
  };
  return {
    match(path: string): string | undefined {
      const name = OPS_PATH.exec(path)?.[1];
      return name === undefined ? undefined : `/${name.toLowerCase()}`;
    },
    answer(route: string, method: string, path: string): Promise<OpsAnswer> | OpsAnswer {
      if (method !== 'GET' && method !== 'HEAD') {
        throw methodNotAllowed(method, path, ['GET', 'HEAD']);
      }
      return answers[route]();
    },
  };
}
