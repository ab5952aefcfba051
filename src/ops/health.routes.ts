import { Router } from 'express';
import { withTimeout } from '../common/timeout';
import { ApiError } from '../errors';
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
    })
    .all(['/healthz', '/readyz', '/metrics'], (req) => {
      throw new ApiError('METHOD_NOT_ALLOWED', `${req.method} is not supported on ${req.path}; use GET or HEAD`, {
        Allow: 'GET, HEAD',
      });
    });
}
