import { DirectiveLocation, GraphQLDirective, GraphQLEnumType, GraphQLInt, GraphQLNonNull, GraphQLString } from 'graphql';

export const StabilityLevel = new GraphQLEnumType({
  name: 'StabilityLevel',
  description: 'How settled a part of the schema is.',
  values: {
    BETA: { description: 'Complete and supported, but its shape may still change in a compatible way or, rarely, an incompatible one announced in advance.' },
    EXPERIMENTAL: { description: 'A trial: it may change or disappear without notice.' },
  },
});

/** Marks operations that are newer than the original service (docs/contract.md §7). */
export const stabilityDirective = new GraphQLDirective({
  name: 'stability',
  description: 'How settled this field is; fields without it are stable.',
  locations: [DirectiveLocation.FIELD_DEFINITION, DirectiveLocation.OBJECT, DirectiveLocation.ENUM],
  args: { level: { type: new GraphQLNonNull(StabilityLevel), description: 'BETA or EXPERIMENTAL.' } },
});

/** Documents a per-field limit; the FieldRateLimit middleware enforces it. */
export const rateLimitDirective = new GraphQLDirective({
  name: 'rateLimit',
  description: 'At most `max` calls of this field per `window`, per API key; more are refused with RATE_LIMITED.',
  locations: [DirectiveLocation.FIELD_DEFINITION],
  args: {
    max: { type: new GraphQLNonNull(GraphQLInt), description: 'Calls allowed per window.' },
    window: { type: new GraphQLNonNull(GraphQLString), description: 'The window, such as "1m".' },
  },
});
