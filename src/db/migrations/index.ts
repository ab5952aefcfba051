import { Init1795319808725 } from './1795319808725-Init';
import { IdempotencyKeys1795322186073 } from './1795322186073-IdempotencyKeys';
import { PlaceOrderFunction1795400000000 } from './1795400000000-PlaceOrderFunction';
import { PetNameSearchIndexes1795500000000 } from './1795500000000-PetNameSearchIndexes';
import { CatalogueCounts1795600000000 } from './1795600000000-CatalogueCounts';
import { FilteredPageIndexes1795600000001 } from './1795600000001-FilteredPageIndexes';
import { DomainRules1795700000000 } from './1795700000000-DomainRules';
import { ChangeTriggers1795800000000 } from './1795800000000-ChangeTriggers';

/** Every migration, in order. Listed explicitly so that builds, tests and the CLI agree. */
export const MIGRATIONS: Function[] = [
  Init1795319808725,
  IdempotencyKeys1795322186073,
  PlaceOrderFunction1795400000000,
  PetNameSearchIndexes1795500000000,
  CatalogueCounts1795600000000,
  FilteredPageIndexes1795600000001,
  DomainRules1795700000000,
  ChangeTriggers1795800000000,
];
