// OAuth sign-in to an HTTP MCP server, through the built CLI, against a real authorization server
// and protected MCP server in-process on 127.0.0.1 (the fixture of @agent/tools-mcp's OAuth tests:
// its MCP endpoint answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"`). On a
// terminal the browser signs in; in a run nobody can sign in from, the server is skipped at once
// (it waited for a browser that could never come back before).
import { chmod, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Harness } from '../testing/repl-harness.js';
import { appDir, assertBuilt, cleanEnv, runCli, writeScript } from '../testing/test-support.js';

interface OAuthServer {
  url: string;
  provider: { stats: { registrations: number; authorizations: number } };
  close(): Promise<void>;
}

const harness = new Harness();
const cleanups: (() => Promise<void>)[] = [];
beforeAll(() => {
  assertBuilt();
});
afterEach(async () => {
  await harness.dispose();
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

const rootsFixture = join(appDir, 'src/__fixtures__/roots-log-server.mjs');

/**
 * The protected server (`secure`) beside a stdio server that needs nothing (`fixture`), and a
 * "browser" that records each URL it is given and follows the sign-in as a user would.
 */
async function setup() {
  const { startOAuthServer } = (await import(
    join(appDir, '../../packages/tools-mcp/src/__fixtures__/oauth-server.mjs')
  )) as { startOAuthServer(): Promise<OAuthServer> };
  const oauth = await startOAuthServer();
  cleanups.push(() => oauth.close());
  const { dir, workspace } = await harness.folder('agent-cli-mcp-auth-');
  const home = join(dir, 'home');
  const config = join(dir, 'mcp.json');
  await writeFile(
    config,
    JSON.stringify({
      mcpServers: {
        secure: { url: oauth.url },
        fixture: { command: process.execPath, args: [rootsFixture] },
      },
    }),
  );
  const opened = join(dir, 'opened.txt');
  const browser = join(dir, 'browser.mjs');
  await writeFile(
    browser,
    [
      `#!${process.execPath}`,
      "import { appendFileSync } from 'node:fs';",
      `appendFileSync(${JSON.stringify(opened)}, process.argv[2] + '\\n');`,
      "const authorize = await fetch(process.argv[2], { redirect: 'manual' });",
      "await (await fetch(authorize.headers.get('location'))).text();",
    ].join('\n'),
  );
  await chmod(browser, 0o755);
  const saved = join(dir, 'conversation.json');
  const args = ['--mcp-config', config, '--mode', 'full-access', '--save', saved];
  const env = (extra: Record<string, string> = {}) =>
    cleanEnv({ BROWSER: browser, AGENT_HOME: home, ...extra });
  const browserOpened = async () =>
    (await readFile(opened, 'utf8').catch(() => '')).split('\n').filter(Boolean);
  /** The tool results of the saved conversation: tool name and text. */
  const results = async () => {
    const data = JSON.parse(await readFile(saved, 'utf8')) as {
      messages: { role: string; toolName?: string; content: { text?: string }[] }[];
    };
    return data.messages
      .filter((message) => message.role === 'toolResult')
      .map((message) => [message.toolName, message.content[0]?.text ?? '']);
  };
  return { oauth, dir, workspace, home, args, env, saved, browserOpened, results };
}

const notice = (why: string) =>
  `mcp secure: needs authorization, skipped: ${why}. To authorise it, run agent once in a terminal`;
const noTerminal = 'this run has no terminal for the browser sign-in it needs';

describe('an HTTP MCP server that needs sign-in, in a run nobody can sign in from', () => {
  it.each([
    ['-p with stdin not a terminal', ['-p', 'go'], {}],
    ['-p with the prompt piped in', ['-p'], {}],
    ['-p with stdin not a terminal, CI set', ['-p', 'go'], { CI: 'true' }],
  ])('%s: skipped at once with how to authorise it; the run goes on', async (_case, extra, env) => {
    const run = await setup();
    const script = await writeScript(run.dir, [
      { toolCalls: [{ name: 'fixture__workspace', arguments: {} }] },
      { text: 'Went on without it.' },
    ]);
    const { code, stdout, stderr } = await runCli(
      ['--scripted', script, '--cwd', run.workspace, ...run.args, ...extra],
      { cwd: run.dir, input: 'go', env: run.env(env) },
    );
    expect(stderr).toContain(notice(noTerminal));
    expect(stderr).not.toContain('could not connect');
    // Said once: not again as the server's error.
    expect(stderr.split('needs authorization')).toHaveLength(2);
    expect(code).toBe(0);
    expect(stdout).toContain('Went on without it.');
    // The other server's tool ran; nothing was opened or asked of the authorization server.
    expect((await run.results()).map(([name]) => name)).toEqual(['fixture__workspace']);
    expect(await run.browserOpened()).toEqual([]);
    expect(run.oauth.provider.stats.authorizations).toBe(0);
  });
});

describe('an HTTP MCP server that needs sign-in, on a terminal (tmux)', () => {
  beforeEach(skipWithout('tmux'));

  it('-p in a CI job (CI=true): skipped, saying CI is set; no browser', async () => {
    const run = await setup();
    const session = await harness.start({
      dir: run.dir,
      workspace: run.workspace,
      script: { steps: [{ text: 'Went on without it.' }] },
      args: [...run.args, '-p', 'go'],
      env: run.env({ CI: 'true' }),
    });
    await session.waitForText(
      notice('this run is a CI job (CI is set): nobody is there to sign in'),
    );
    expect(await session.waitForExit()).toBe(0);
    expect(await run.browserOpened()).toEqual([]);
    expect(run.oauth.provider.stats.authorizations).toBe(0);
  });

  it('-p (CI unset): the browser signs in; the tokens are kept 0600 and used by a later run without a terminal', async () => {
    const run = await setup();
    const session = await harness.start({
      dir: run.dir,
      workspace: run.workspace,
      script: {
        steps: [{ toolCalls: [{ name: 'secure__whoami', arguments: {} }] }, { text: 'Signed in.' }],
      },
      args: [...run.args, '-p', 'who am I'],
      // A person at a terminal: not a CI job.
      env: run.env({ CI: '' }),
    });
    await session.waitForText(
      'mcp secure needs authorization: opened in your browser; if it did not open, visit http://127.0.0.1:',
    );
    expect(await session.waitForExit()).toBe(0);
    const [url, ...more] = await run.browserOpened();
    expect(more).toEqual([]);
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/authorize\?/);
    const [[tool, whoami] = []] = await run.results();
    expect(tool).toBe('secure__whoami');
    expect(whoami).toContain('mcp:tools');
    const tokens = join(run.home, 'mcp-tokens.json');
    expect((await stat(tokens)).mode & 0o777).toBe(0o600);
    expect(await readFile(run.saved, 'utf8')).not.toMatch(/access_token|refresh_token/);

    // The kept tokens need no browser: a run with no terminal, even in CI, uses them.
    const script = await writeScript(run.dir, [
      { toolCalls: [{ name: 'secure__whoami', arguments: {} }] },
      { text: 'Again.' },
    ]);
    const again = await runCli(
      ['--scripted', script, '--cwd', run.workspace, ...run.args, '-p', 'again'],
      {
        cwd: run.dir,
        env: run.env({ CI: 'true' }),
      },
    );
    expect(again.code).toBe(0);
    expect(again.stderr).not.toContain('needs authorization');
    expect((await run.results())[0]?.[1]).toContain('mcp:tools');
    expect(await run.browserOpened()).toHaveLength(1);
    expect(run.oauth.provider.stats.authorizations).toBe(1);
  });
});
