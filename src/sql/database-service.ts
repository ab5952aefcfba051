import type { DataSource } from 'typeorm';

/**
 * A service over the database. `over(db)` is the same service, its state shared, reading and
 * writing through another view of the data source: one request's, whose statements are counted.
 */
export abstract class DatabaseService {
  constructor(protected readonly db: DataSource) {}

  over(db: DataSource): this {
    return Object.create(this, { db: { value: db } });
  }
}
