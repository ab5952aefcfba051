import { DEFAULT_EMBEDDED_SANDBOX_VERSION } from '@apollo/server/plugin/landingPage/default';
import { GRAPHQL_PATH } from '../endpoints';
import { EXAMPLE_OPERATION } from './example-operation';
import { EXPLORER_PATH } from './explorer-assets';
import { inline } from './inline-value';

/** Apollo's embeddable Sandbox, from Apollo's CDN at the version Apollo Server's own landing page loads. */
export const SANDBOX_SCRIPT = `https://embeddable-sandbox.cdn.apollographql.com/${DEFAULT_EMBEDDED_SANDBOX_VERSION}/embeddable-sandbox.umd.production.min.js`;

/** How long the page waits for Sandbox's script before showing GraphiQL instead, within the 3 s docs/contract.md §8 allows. */
export const SANDBOX_WAIT_MS = 2_000;

/**
 * The page's one script. Sandbox's script is added by it, so that its failure is an event the page
 * hears (offline, a firewall, a Content-Security-Policy, a blocker): then, or when it has not
 * arrived after SANDBOX_WAIT_MS, GraphiQL (the gateway's own, at /graphql/explorer) takes its place,
 * with a line saying why. Whichever comes first decides; `data-explorer` on the body says which.
 */
const SCRIPT = `
var decided = false;
function decide(explorer) {
  if (decided) return false;
  decided = true;
  clearTimeout(timer);
  document.body.setAttribute('data-explorer', explorer);
  return true;
}
function showGraphiQL(why) {
  if (!decide('graphiql')) return;
  document.getElementById('sandbox').remove();
  document.getElementById('why').textContent = why;
  document.getElementById('fallback').hidden = false;
  document.getElementById('graphiql').src = config.graphiql;
}
var timer = setTimeout(function () {
  showGraphiQL('Apollo Sandbox did not load within ' + config.waitMs / 1000 + ' s');
}, config.waitMs);
var script = document.createElement('script');
script.src = config.sandbox;
script.onerror = function () { showGraphiQL('Apollo Sandbox could not be loaded from ' + new URL(config.sandbox).host); };
script.onload = function () {
  if (decided) return;
  try {
    document.getElementById('sandbox').textContent = '';
    new window.EmbeddedSandbox({
      target: '#sandbox',
      initialEndpoint: new URL(config.endpoint, location.href).href,
      initialState: { document: config.query, headers: {} },
      endpointIsEditable: false,
    });
  } catch (error) {
    return showGraphiQL('Apollo Sandbox did not start (' + error + ')');
  }
  decide('sandbox');
};
document.head.appendChild(script);
`;

/**
 * What a browser gets at /graphql by default outside production: Apollo Sandbox, embedded as
 * Apollo Server's landing page embeds it, and in its place, with no click, the gateway's own
 * GraphiQL when Sandbox cannot load (test/frontend/sandbox-page.cases.ts shows both in Chromium).
 */
export function sandboxPage(): string {
  const config = { sandbox: SANDBOX_SCRIPT, waitMs: SANDBOX_WAIT_MS, endpoint: GRAPHQL_PATH, graphiql: EXPLORER_PATH, query: EXAMPLE_OPERATION };
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Pet Store gateway · Apollo Sandbox</title>
<style>
  body { margin: 0; display: flex; flex-direction: column; height: 100vh; font: 14px sans-serif; }
  #sandbox, #fallback { flex: 1; display: flex; flex-direction: column; }
  iframe { flex: 1; width: 100%; border: 0; }
  #fallback[hidden] { display: none; }
  #fallback p { margin: 0; padding: 0.4em 0.8em; background: #fff8e1; border-bottom: 1px solid #e0c97f; }
</style>
</head>
<body>
<div id="sandbox"><p style="padding: 1em">Loading Apollo Sandbox…</p></div>
<div id="fallback" hidden>
<p><span id="why"></span>: this is GraphiQL, served by this gateway (<a href="${EXPLORER_PATH}" target="_top">${EXPLORER_PATH}</a>), which needs no internet. Reload to try Sandbox again.</p>
<iframe id="graphiql" title="GraphiQL"></iframe>
</div>
<script>
var config = ${inline(config)};
${SCRIPT.trim()}
</script>
</body>
</html>
`;
}
