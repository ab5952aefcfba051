import { STREAM_PATH } from '../endpoints';

/**
 * What a browser gets where no explorer is served (GRAPHQL_EXPLORER=off, the default in
 * production): a word that it is off and how to query instead, not a GraphQL error it did not ask for.
 */
export function explorerOffPage(): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><title>Pet Store gateway · no explorer</title></head>
<body style="font-family: sans-serif; max-width: 40em; margin: 2em auto; line-height: 1.5">
<h1>The explorer is off</h1>
<p>This gateway serves no GraphQL explorer (<code>GRAPHQL_EXPLORER=off</code>, the default in production
or with <code>GRAPHQL_INTROSPECTION</code> off). The API itself answers:</p>
<ul>
<li>queries and mutations: <code>POST /graphql</code> with <code>Content-Type: application/json</code> and a body
<code>{"query": "{ pets(first: 3) { nodes { id name } } }"}</code>, a key in the <code>X-API-Key</code> header;</li>
<li>subscriptions: WebSocket (<code>graphql-transport-ws</code>) on <code>/graphql</code>, or Server-Sent Events on
<code>${STREAM_PATH}</code>.</li>
</ul>
<p>Outside production, with introspection on, <code>GRAPHQL_EXPLORER=sandbox</code> (the default) serves Apollo Sandbox
here, and <code>GRAPHQL_EXPLORER=graphiql</code> GraphiQL.</p>
</body>
</html>
`;
}
