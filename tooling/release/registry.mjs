// The round trip's registry: Verdaccio on 127.0.0.1 (port 0), in this process, holding only what
// the run publishes (@agent/*, in the run's own storage). Consumer projects ask it for @agent/*
// alone (a scoped registry, as a company registry is used): every third-party package comes from
// the npm registry through npm's and pnpm's own caches, as for a user. (Through an uplink, this
// one process rewrote every third-party document for every install: most of the CPU the round
// trip spent, and no cache across runs, since its port changes.)
import { mkdirSync } from 'node:fs';
import path from 'node:path';

/** Starts Verdaccio with its storage in `work`; resolves with its URL, a token that may publish, and `close()`. */
export async function startRegistry({ work }) {
  const { runServer } = await import('verdaccio');
  const storage = path.join(work, 'storage');
  mkdirSync(storage, { recursive: true });
  const app = await runServer({
    self_path: path.join(work, 'verdaccio.yaml'),
    storage,
    auth: { htpasswd: { file: path.join(work, 'htpasswd'), max_users: 10 } },
    // No uplinks: a request for anything but @agent/* is a 404 here.
    uplinks: {},
    packages: {
      '@agent/*': { access: '$all', publish: '$authenticated', unpublish: '$authenticated' },
    },
    log: { type: 'stdout', format: 'pretty', level: 'fatal' },
    web: { enable: false },
    security: { api: { legacy: true } },
  });
  const server = await new Promise((resolve, reject) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    listening.on('error', reject);
  });
  const url = `http://127.0.0.1:${server.address().port}/`;
  const response = await fetch(`${url}-/user/org.couchdb.user:release`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'release', password: 'round-trip-only' }),
  });
  const { token } = await response.json();
  if (typeof token !== 'string') throw new Error(`Verdaccio gave no token (${response.status})`);
  return {
    url,
    token,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        // Keep-alive sockets of finished installs would hold close() open.
        server.closeAllConnections?.();
      }),
  };
}

/**
 * An .npmrc with the registry's token: `scope: '@agent'` sends that scope there and leaves every
 * other package to the default registry (a consumer); without it, everything goes there (publishing).
 */
export function npmrc(url, token, { scope } = {}) {
  const host = url.replace(/^http:/, '');
  return `${scope === undefined ? '' : `${scope}:`}registry=${url}\n${host}:_authToken=${token}\n`;
}
