import 'reflect-metadata';
import { parseArgs } from 'node:util';
import { validate } from 'class-validator';
import { NewApiKeyInput, checkCustomQuota } from '../auth/api-key.inputs';
import { ApiKeyService } from '../auth/api-key.service';
import { ApiKeyRole } from '../auth/role';
import { loadConfig } from '../config';
import { openDatabase } from '../db/database';
import { describeViolations } from '../format-error';
import { Plan } from '../auth/plans';
import { Statements } from '../sql/statements';

export const USAGE = `usage: npm run apikey -- create --name NAME --plan FREE|PRO|BUSINESS|ENTERPRISE
         [--role client|admin] [--per-minute N --per-day N]   (custom figures: ENTERPRISE only)
Issues an API key straight into the database at DATABASE_URL and prints it once.`;

/** The mutation's field names, as this command's options. */
const OPTION_OF_FIELD: Record<string, string> = { requestsPerMinute: '--per-minute', requestsPerDay: '--per-day' };

function inOptionTerms(message: string): string {
  return message.replace(/requestsPer(Minute|Day)/g, (field) => OPTION_OF_FIELD[field] ?? field);
}

export function wantsHelp(argv: string[]): boolean {
  return argv.includes('--help') || argv.includes('-h');
}

function parseOptions(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        name: { type: 'string' },
        plan: { type: 'string' },
        role: { type: 'string', default: 'client' },
        'per-minute': { type: 'string' },
        'per-day': { type: 'string' },
      },
    });
  } catch (error) {
    // Node's own words (an unknown option, a missing value), then how the command is used.
    throw new Error(`${(error as Error).message}\n${USAGE}`);
  }
}

function oneOf<T extends string>(values: Record<string, T>, raw: string, option: string): T {
  const value = Object.values(values).find((candidate) => candidate === raw.toLowerCase());
  if (!value) throw new Error(`--${option}: expected one of ${Object.keys(values).join(', ')}, got ${JSON.stringify(raw)}`);
  return value;
}

function figure(raw: string | undefined, option: string): number | null {
  if (raw === undefined) return null;
  if (!/^\d+$/.test(raw)) throw new Error(`--${option}: expected a whole number, got ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** Parses `create --name … --plan …` into the same input the createApiKey mutation takes. */
export async function parseCreateCommand(argv: string[]): Promise<NewApiKeyInput> {
  const { values, positionals } = parseOptions(argv);
  if (positionals[0] !== 'create' || positionals.length !== 1 || !values.name || !values.plan) throw new Error(USAGE);
  const input = Object.assign(new NewApiKeyInput(), {
    name: values.name,
    plan: oneOf(Plan, values.plan, 'plan'),
    role: oneOf(ApiKeyRole, values.role, 'role'),
    requestsPerMinute: figure(values['per-minute'], 'per-minute'),
    requestsPerDay: figure(values['per-day'], 'per-day'),
  });
  const violations = await validate(input, { skipMissingProperties: false, forbidUnknownValues: false });
  if (violations.length) throw new Error(inOptionTerms(describeViolations(violations)));
  try {
    checkCustomQuota(input);
  } catch (error) {
    throw new Error(inOptionTerms((error as Error).message));
  }
  return input;
}

/** `npm run apikey -- create …`: issues a key straight into the database, for bootstrapping a deployment. */
async function main(): Promise<void> {
  if (wantsHelp(process.argv.slice(2))) {
    console.log(USAGE);
    return;
  }
  const input = await parseCreateCommand(process.argv.slice(2));
  const config = loadConfig();
  if (!config.databaseUrl) {
    throw new Error('DATABASE_URL: expected the postgres:// URL of the deployment to add the key to, got nothing');
  }
  const database = await openDatabase(config);
  try {
    const { key, apiKey } = await new ApiKeyService(new Statements(database.dataSource)).create(input);
    console.log(`Created API key ${apiKey.id} "${apiKey.name}" (${apiKey.plan.toUpperCase()}, ${apiKey.role}).`);
    console.log('Send it as the X-API-Key header. It is shown only this once:');
    console.log(key);
  } finally {
    await database.close();
  }
}

if (require.main === module) {
  main().catch((error: unknown) => {
    console.error(error instanceof Error ? error.message : error);
    process.exit(1);
  });
}
