/** Where GraphQL is served over HTTP and WebSocket (docs/contract.md §1). */
export const GRAPHQL_PATH = '/graphql';
/** Where subscriptions are served over Server-Sent Events (docs/contract.md §9). */
export const STREAM_PATH = '/graphql/stream';
