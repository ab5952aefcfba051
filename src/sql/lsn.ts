/**
 * PostgreSQL's write-ahead log positions (`pg_lsn`, written `16/B374D848`) as bigints, so that
 * positions from the primary, the replicas and clients compare as numbers.
 */
const LSN_TEXT = /^([0-9A-Fa-f]{1,8})\/([0-9A-Fa-f]{1,8})$/;

/** The position `text` names, or undefined when it is not a pg_lsn. */
export function parseLsn(text: string): bigint | undefined {
  const match = LSN_TEXT.exec(text);
  if (!match) return undefined;
  return (BigInt(`0x${match[1]}`) << 32n) | BigInt(`0x${match[2]}`);
}

/** `position` as PostgreSQL writes it. */
export function formatLsn(position: bigint): string {
  return `${(position >> 32n).toString(16).toUpperCase()}/${(position & 0xffffffffn).toString(16).toUpperCase()}`;
}
