// The user settings' "webFetchPrivateHosts": the one way to let web_fetch reach a local server
// (docs on localhost, an intranet wiki); read only from the user's own file.

import { mkdir, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { executeTool } from '@agent/core';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { loadTools } from '../session/tool-sources.js';
import { tempDir } from '../testing/test-support.js';
import { parseCliArgs } from './args.js';
import { applySettings, loadSettings, mergeSettings, readSettingsLayers } from './settings.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

let server: Server;
let port = 0;
beforeAll(async () => {
  server = createServer((_request, response) => response.end('local docs'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

async function folders(user: unknown, project?: { file: string; content: unknown }) {
  const dir = await tempDir('agent-cli-web-private-');
  cleanups.push(dir.dispose);
  const home = join(dir.path, 'home');
  const workspace = join(dir.path, 'ws');
  await mkdir(home, { recursive: true });
  await mkdir(join(workspace, '.agent'), { recursive: true });
  await writeFile(join(home, 'settings.json'), JSON.stringify(user));
  if (project !== undefined)
    await writeFile(join(workspace, '.agent', project.file), JSON.stringify(project.content));
  return { home, workspace };
}

async function webFetch(workspace: string, hosts: string[] | undefined, url: string) {
  const tools = await loadTools(
    {
      cwd: workspace,
      mcpConfig: undefined,
      openapi: [],
      sandbox: 'off',
      tools: [{ items: ['web_fetch'], source: 'test' }],
      ...(hosts === undefined ? {} : { webFetchPrivateHosts: hosts }),
    },
    () => undefined,
  );
  cleanups.push(() => tools.close());
  const tool = tools.tools.find((candidate) => candidate.name === 'web_fetch');
  if (tool === undefined) throw new Error('no web_fetch');
  const message = await executeTool(tool, { url });
  const first = message.content[0];
  return { isError: message.isError === true, text: first?.type === 'text' ? first.text : '' };
}

describe('"webFetchPrivateHosts" in settings', () => {
  it('the user settings name hosts (any case); the options carry them', async () => {
    const { home, workspace } = await folders({ webFetchPrivateHosts: ['LocalHost', 'docs.test'] });
    const settings = await loadSettings(workspace, home);
    expect(settings.webFetchPrivateHosts).toEqual(['localhost', 'docs.test']);
    const options = applySettings(parseCliArgs(['-p', 'x']), settings, false);
    expect(options.webFetchPrivateHosts).toEqual(['localhost', 'docs.test']);
  });

  it.each(['settings.json', 'settings.local.json'])(
    'a project file (%s) may not set it: a repository cannot open your network',
    async (file) => {
      const { home, workspace } = await folders(
        {},
        { file, content: { webFetchPrivateHosts: ['localhost'] } },
      );
      const layers = await readSettingsLayers(workspace, home);
      expect(mergeSettings(layers).webFetchPrivateHosts).toEqual([]);
      expect(layers.flatMap((layer) => layer.ignored ?? []).join('\n')).toMatch(
        /ignored "webFetchPrivateHosts" in .*: only your settings .* a workspace cannot open your local network/,
      );
    },
  );

  it('must be a list of strings', async () => {
    const { home, workspace } = await folders({ webFetchPrivateHosts: 'localhost' });
    await expect(loadSettings(workspace, home)).rejects.toThrow(/"webFetchPrivateHosts"/);
  });

  it('web_fetch reaches a named host on a private address; every other stays refused', async () => {
    const { workspace } = await folders({});
    const refused = await webFetch(workspace, undefined, `http://localhost:${port}/`);
    expect(refused.isError).toBe(true);
    expect(refused.text).toMatch(/Refusing to fetch/);
    const allowed = await webFetch(workspace, ['localhost'], `http://localhost:${port}/`);
    expect(allowed.isError).toBe(false);
    expect(allowed.text).toContain('local docs');
    // The name is what is allowed, not the address: another spelling of it stays refused.
    for (const url of [
      `http://127.0.0.1:${port}/`,
      `http://[::1]:${port}/`,
      'http://169.254.169.254/',
    ]) {
      const other = await webFetch(workspace, ['localhost'], url);
      expect(other.isError, url).toBe(true);
      expect(other.text, url).toMatch(/Refusing to fetch/);
    }
  });
});
