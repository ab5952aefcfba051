import type { ApolloServerPlugin } from '@apollo/server';
import { ApolloServerPluginLandingPageLocalDefault } from '@apollo/server/plugin/landingPage/default';
import type { Explorer } from '../../config';
import { EXAMPLE_OPERATION } from './example-operation';
import { EXPLORER_PATH } from './explorer-assets';
import { graphiqlPage } from './graphiql-page';
import { explorerOffPage } from './off-page';

/**
 * Sandbox loads from Apollo's CDN: its page says where the explorer that needs no internet is.
 * The page's Content-Security-Policy admits only styles carrying its nonce, so the note's style
 * takes the page's own (test/frontend/sandbox-offline.cases.ts shows the note in a browser).
 */
function withOfflineNote(html: string): string {
  const nonce = /nonce="?([0-9a-f]+)/.exec(html)?.[1] ?? '';
  const note = `<style nonce="${nonce}">
  .offline-note { position: fixed; right: 1em; bottom: 0.5em; z-index: 10; margin: 0; padding: 0.3em 0.6em;
    background: #fff; border: 1px solid #ccc; border-radius: 4px; font: 13px sans-serif; }
</style>
<p class="offline-note">Offline, or Sandbox does not load? <a href="${EXPLORER_PATH}">GraphiQL, served by this gateway</a></p>
`;
  const end = html.lastIndexOf('</body>');
  return end < 0 ? html + note : html.slice(0, end) + note + html.slice(end);
}

/** Apollo's local Sandbox page, through the plugin's own renderLandingPage hook, with the note added. */
function sandboxWithOfflineNote(): ApolloServerPlugin {
  const sandbox = ApolloServerPluginLandingPageLocalDefault({ footer: false, document: EXAMPLE_OPERATION });
  return {
    async serverWillStart(service) {
      const listener = await sandbox.serverWillStart?.(service);
      const render = listener?.renderLandingPage;
      if (!render) return listener;
      return {
        ...listener,
        async renderLandingPage() {
          const { html } = await render();
          return { html: withOfflineNote(typeof html === 'string' ? html : await html()) };
        },
      };
    },
  };
}

function fixedPage(html: string): ApolloServerPlugin {
  return {
    async serverWillStart() {
      return { async renderLandingPage() { return { html }; } };
    },
  };
}

/** What `/graphql` shows a browser (an HTML GET), by GRAPHQL_EXPLORER. */
export function landingPagePlugin(explorer: Explorer): ApolloServerPlugin {
  if (explorer === 'sandbox') return sandboxWithOfflineNote();
  return fixedPage(explorer === 'graphiql' ? graphiqlPage() : explorerOffPage());
}
