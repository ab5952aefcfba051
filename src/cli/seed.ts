import 'reflect-metadata';
import { loadConfig } from '../config';
import { openDatabase } from '../db/database';
import { seedDemoCatalogue } from '../db/seed';
import { startFailure } from '../start-failure';

/** `npm run seed`: loads the demo catalogue into the configured database when it has none. */
async function main(): Promise<void> {
  const database = await openDatabase(loadConfig());
  try {
    const loaded = await seedDemoCatalogue(database.dataSource);
    console.log(loaded ? 'Loaded the demo catalogue.' : 'The database already has a catalogue; nothing loaded.');
  } finally {
    await database.close();
  }
}

main().catch((error: unknown) => {
  console.error(startFailure(error));
  process.exit(1);
});
