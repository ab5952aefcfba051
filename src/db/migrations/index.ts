import { Init1795319808725 } from './1795319808725-Init';

/** Every migration, in order. Listed explicitly so that builds, tests and the CLI agree. */
export const MIGRATIONS: Function[] = [Init1795319808725];
