import Module from 'node:module';
import { dirname, join } from 'node:path';

/**
 * TypeORM's driver factory requires the driver of every database it supports when TypeORM loads:
 * SAP, Spanner, SQL Server, Oracle, MySQL, CockroachDB, MongoDB, the SQLite family… with their
 * query runners, about 1.2 MB of source and 2.5 MB of resident memory that a PostgreSQL gateway
 * (the embedded database is PGlite behind PostgreSQL's wire protocol) never runs. Imported by the
 * process before anything requires TypeORM, this puts in Node's module cache, for each of those
 * driver files, a module whose driver class throws when constructed, so the factory loads them
 * as such and only PostgreSQL's driver is read from disk.
 */
const UNUSED_DRIVERS = [
  'aurora-mysql/AuroraMysqlDriver',
  'aurora-postgres/AuroraPostgresDriver',
  'better-sqlite3/BetterSqlite3Driver',
  'capacitor/CapacitorDriver',
  'cockroachdb/CockroachDriver',
  'cordova/CordovaDriver',
  'expo/ExpoDriver',
  'mongodb/MongoDriver',
  'mysql/MysqlDriver',
  'nativescript/NativescriptDriver',
  'oracle/OracleDriver',
  'react-native/ReactNativeDriver',
  'sap/SapDriver',
  'spanner/SpannerDriver',
  'sqljs/SqljsDriver',
  'sqlserver/SqlServerDriver',
];

/** A module exporting `name` as a class that refuses to be constructed. */
function leftOut(file: string, name: string): Module {
  const stub = new Module(file);
  stub.filename = file;
  stub.loaded = true;
  stub.exports = {
    [name]: class {
      constructor() {
        throw new Error(`TypeORM's ${name} is not loaded: the gateway runs on PostgreSQL only (src/db/postgres-driver-only.ts)`);
      }
    },
  };
  return stub;
}

function leaveOutUnusedDrivers(): void {
  const factory = require.resolve('typeorm/driver/DriverFactory');
  if (require.cache[factory]) throw new Error('TypeORM was loaded before its unused drivers could be left out: import src/db/postgres-driver-only first');
  for (const driver of UNUSED_DRIVERS) {
    const file = join(dirname(factory), `${driver}.js`);
    require.cache[file] = leftOut(file, driver.slice(driver.indexOf('/') + 1));
  }
}

leaveOutUnusedDrivers();
