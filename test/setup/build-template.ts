import 'reflect-metadata';
import { createTemplate } from './database-template';

// Prints where the template is, as environment variables for the test files to read.
createTemplate().then(
  (env) => {
    process.stdout.write(JSON.stringify(env));
    process.exit(0);
  },
  (error: unknown) => {
    console.error(error);
    process.exit(1);
  },
);
