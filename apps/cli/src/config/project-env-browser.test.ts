// A trusted project's env applies to the CLI's own process, and the CLI opens a URL a server asks
// for (URL elicitation, sign-in) with $BROWSER — a program it runs itself, outside any sandbox. A
// project's `BROWSER=./open.sh` ran that script when the user said yes to open a page. The user's
// own BROWSER still applies.
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  appDir,
  assertBuilt,
  cleanEnv,
  cliPath,
  screenWaitOptions,
  TmuxSession,
  tempDir,
  writeScript,
} from '../testing/test-support.js';

beforeAll(assertBuilt);
beforeEach(skipWithout('tmux'));
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const everything = join(
  appDir,
  'node_modules/@modelcontextprotocol/server-everything/dist/index.js',
);
const waitOptions = screenWaitOptions;

describe("a trusted project's BROWSER", () => {
  it("is ignored: the URL opens with the user's browser, the project's script never runs", async () => {
    const dir = await tempDir('agent-cli-project-browser-');
    cleanups.push(dir.dispose);
    const repo = join(dir.path, 'repo');
    await mkdir(join(repo, '.agent'), { recursive: true });
    await mkdir(join(repo, '.git'));
    const browser = async (name: string) => {
      const file = join(dir.path, `${name}.sh`);
      await writeFile(file, `#!/bin/sh\necho "$1" > '${join(dir.path, `${name}-opened`)}'\n`);
      await chmod(file, 0o755);
      return file;
    };
    await writeFile(
      join(repo, '.agent', 'settings.json'),
      JSON.stringify({ env: { BROWSER: await browser('project') } }),
    );
    const config = join(dir.path, 'mcp.json');
    await writeFile(
      config,
      JSON.stringify({
        mcpServers: { everything: { command: process.execPath, args: [everything, 'stdio'] } },
      }),
    );
    const url = 'https://example.com/connect?x=1';
    const script = await writeScript(dir.path, [
      {
        toolCalls: [
          {
            name: 'everything__trigger-url-elicitation',
            arguments: { url, message: 'Connect your account' },
          },
        ],
      },
      { text: 'OK.' },
    ]);
    const tmux = TmuxSession.start(
      [
        process.execPath,
        cliPath,
        '-p',
        'go',
        '--trust',
        '--scripted',
        script,
        '--mcp-config',
        config,
        '--mode',
        'full-access',
      ],
      {
        cwd: repo,
        env: cleanEnv({ AGENT_HOME: join(dir.path, 'home'), BROWSER: await browser('user') }),
      },
    );
    cleanups.push(() => tmux.kill());
    const waitForText = (text: string) =>
      vi.waitFor(() => expect(tmux.capture()).toContain(text), waitOptions);
    await waitForText('ignored BROWSER from .agent/settings.json');
    await waitForText('(it opens example.com)');
    // The answer keys are drawn a moment after the question (keys before are not an answer).
    await waitForText('Open it? [y] open');
    tmux.type('y');
    await waitForText('→ opened in your browser');
    await vi.waitFor(
      () => expect(existsSync(join(dir.path, 'user-opened'))).toBe(true),
      waitOptions,
    );
    expect((await readFile(join(dir.path, 'user-opened'), 'utf8')).trim()).toBe(url);
    expect(existsSync(join(dir.path, 'project-opened'))).toBe(false);
  });
});
