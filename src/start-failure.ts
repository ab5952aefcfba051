import { originalStack } from './common/source-stack';
import { ConfigError } from './config';
import { DatabaseConnectError } from './db/connect-failure';
import { DataDirInUseError } from './db/data-dir-lock';
import { TrustedDocumentError } from './graphql/trusted-documents';

/**
 * What the gateway and its commands print when they cannot start: what an operator can fix is
 * said in one line naming the variable; anything else is a bug, shown with its stack.
 */
export function startFailure(error: unknown): unknown {
  if (error instanceof ConfigError || error instanceof TrustedDocumentError) return `Configuration error: ${error.message}`;
  if (error instanceof DatabaseConnectError || error instanceof DataDirInUseError) return error.message;
  if (error instanceof Error && error.stack) error.stack = originalStack(error.stack);
  return error;
}
