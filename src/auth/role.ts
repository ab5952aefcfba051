import { registerEnumType } from 'type-graphql';

export enum ApiKeyRole {
  CLIENT = 'client',
  ADMIN = 'admin',
}

registerEnumType(ApiKeyRole, {
  name: 'ApiKeyRole',
  description: 'What a key may do.',
  valuesConfig: {
    CLIENT: { description: 'Reads the catalogue, places orders and sees and cancels its own orders.' },
    ADMIN: { description: 'Everything: catalogue and stock writes, every order, completing orders and key management.' },
  },
});
