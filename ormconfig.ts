/**
 * The DataSource the TypeORM CLI uses (`npm run migration:run`, `npm run migration:generate`).
 * It needs DATABASE_URL: migrations are generated against, and applied to, a real PostgreSQL.
 */
import 'reflect-metadata';
import { createDataSource } from './src/db/data-source';

const url = process.env.DATABASE_URL;
if (!url) {
  throw new Error('DATABASE_URL: expected a postgres:// URL for the TypeORM CLI, got nothing');
}

export default createDataSource({ url, poolSize: 2 });
