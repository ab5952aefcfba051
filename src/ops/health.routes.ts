import { Router } from 'express';
import type { DataSource } from 'typeorm';
import type { Metrics } from './metrics';

/** Readiness waits this long for the database. */
export const READINESS_TIMEOUT_MS = 1_000;

export interface HealthDeps {
  dataSource: DataSource;
  metrics: Metrics;
  /** The limiter store's state: `degraded` while Redis is away and limits are per instance. */
  limiterStatus: () => 'ok' | 'degraded' | 'not configured';
}

async function databaseState(dataSource: DataSource): Promise<{ database: 'ok' | 'down'; migrations: 'ok' | 'pending' | 'unknown' }> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('readiness check timed out')), READINESS_TIMEOUT_MS);
  });
  try {
    const [{ applied }] = await Promise.race([
      dataSource.query('SELECT count(*)::int AS applied FROM migrations'),
      timeout,
    ]);
    return { database: 'ok', migrations: applied >= dataSource.migrations.length ? 'ok' : 'pending' };
  } catch {
    return { database: 'down', migrations: 'unknown' };
  } finally {
    clearTimeout(timer);
  }
}

/** Liveness, readiness and metrics: outside the limiter, never rate limited. */
export function healthRoutes({ dataSource, metrics, limiterStatus }: HealthDeps): Router {
  return Router()
    .get('/healthz', (_req, res) => {
      res.json({ status: 'ok' });
    })
    .get('/readyz', async (_req, res) => {
      const state = await databaseState(dataSource);
      // Redis away is a degradation (limits fall back to per instance), not unreadiness.
      const ready = state.database === 'ok' && state.migrations === 'ok';
      res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', ...state, redis: limiterStatus() });
    })
    .get('/metrics', async (_req, res) => {
      res.type(metrics.registry.contentType).send(await metrics.registry.metrics());
    });
}
