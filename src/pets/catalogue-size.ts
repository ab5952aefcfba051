import type { Logger } from '../logger';
import type { PetService } from './pet.service';

/** How long a size read is used before the next request reads it again: a scan's price may lag the table this long. */
export const CATALOGUE_SIZE_TTL_MS = 5_000;

/** The size assumed before the first read answers, or while reads fail: the one the scan prices were measured at. */
const UNREAD_SIZE = 100_000;

/**
 * The number of pets, which prices a substring filter's scan (docs/contract.md §5). Read from the
 * counters `totalCount` reads (PetService.catalogueSize: a few counter rows, whatever the size), kept
 * CATALOGUE_SIZE_TTL_MS, then read again in the background while the last one is still used, one
 * read at a time: pricing a request never waits for the database.
 */
export class CatalogueSize {
  private pets = UNREAD_SIZE;
  private readAt = -Infinity;
  private reading: Promise<number> | undefined;

  constructor(
    private readonly service: PetService,
    private readonly logger: Logger,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** The size last read; starts the next read when it is older than CATALOGUE_SIZE_TTL_MS. */
  current(): number {
    if (this.now() - this.readAt >= CATALOGUE_SIZE_TTL_MS) void this.refresh();
    return this.pets;
  }

  /** Reads the size now (at start-up); resolves to it, or to the last one when the read failed. */
  refresh(): Promise<number> {
    this.reading ??= this.read().finally(() => (this.reading = undefined));
    return this.reading;
  }

  private async read(): Promise<number> {
    try {
      this.pets = await this.service.catalogueSize();
    } catch (error) {
      // The last size stands until the next read, a TTL later: a database away is not read on every request.
      this.logger.warn({ err: error }, 'could not read the catalogue size; scans are priced at the last one');
    }
    this.readAt = this.now();
    return this.pets;
  }
}
