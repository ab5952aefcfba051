import { GRAPHQL_PATH, STREAM_PATH } from '../endpoints';
import { EXAMPLE_OPERATION } from './example-operation';
import { EXPLORER_PATH } from './explorer-assets';
import { inline } from './inline-value';
import { OPERATIONS_OF } from './operations-of';

/**
 * GraphiQL's fetcher: queries and mutations are POSTed to /graphql; a subscription is a
 * graphql-sse stream on /graphql/stream, an async iterable GraphiQL shows event by event. Both
 * carry the headers of GraphiQL's Headers tab (X-API-Key). The operation is the one the text
 * names (operationsOf), so that Run pressed right after an edit runs what the editor shows.
 */
const FETCHER = `
${OPERATIONS_OF}
function fetcher(params, options) {
  var operations = operationsOf(params.query || '');
  var chosen = operations.find(function (o) { return o.name === params.operationName; }) || (operations.length === 1 ? operations[0] : undefined);
  var body = Object.assign({}, params, { operationName: chosen ? chosen.name : params.operationName });
  var headers = Object.assign({}, options && options.headers);
  if (chosen && chosen.type === 'subscription') {
    var client = graphqlSse.createClient({ url: new URL(config.stream, location.href).href, headers: headers, retryAttempts: 0 });
    return client.iterate(body);
  }
  return fetch(config.endpoint, {
    method: 'POST',
    headers: Object.assign({ 'Content-Type': 'application/json', Accept: 'application/graphql-response+json, application/json' }, headers),
    body: JSON.stringify(body),
  }).then(function (response) { return response.json(); });
}
ReactDOM.createRoot(document.getElementById('graphiql')).render(
  React.createElement(GraphiQL, {
    fetcher: fetcher,
    defaultQuery: config.query,
    defaultHeaders: '{}',
    defaultEditorToolsVisibility: 'headers',
  }),
);
`;

/** The offline explorer's page: GraphiQL and everything it loads come from this gateway. */
export function graphiqlPage(): string {
  const asset = (name: string) => `${EXPLORER_PATH}/${name}`;
  const config = { endpoint: GRAPHQL_PATH, stream: STREAM_PATH, query: EXAMPLE_OPERATION };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pet Store gateway · GraphiQL</title>
<link rel="stylesheet" href="${asset('graphiql.min.css')}">
<style>body { margin: 0; } #graphiql { height: 100vh; }</style>
</head>
<body>
<div id="graphiql">Loading GraphiQL…</div>
<script src="${asset('react.production.min.js')}"></script>
<script src="${asset('react-dom.production.min.js')}"></script>
<script src="${asset('graphiql.min.js')}"></script>
<script src="${asset('graphql-sse.min.js')}"></script>
<script>
var config = ${inline(config)};
${FETCHER.trim()}
</script>
</body>
</html>
`;
}
