import { registerEnumType } from 'type-graphql';

/** Stored and sent by REST in lower case; GraphQL names the values in upper case. */
export enum PetStatus {
  AVAILABLE = 'available',
  PENDING = 'pending',
  SOLD = 'sold',
}

registerEnumType(PetStatus, {
  name: 'PetStatus',
  description: 'Where a pet, or its stock, stands in the sales cycle.',
  valuesConfig: {
    AVAILABLE: { description: 'For sale: a pet can be ordered; stock is above zero.' },
    PENDING: { description: 'Reserved: no stock left, but an order for the pet is still open.' },
    SOLD: { description: 'Sold out: no stock left and no open order.' },
  },
});
