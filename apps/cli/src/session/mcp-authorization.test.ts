// OAuth sign-in to an HTTP MCP server, through the built CLI, against a real authorization server
// and protected MCP server in-process on 127.0.0.1 (the fixture of @agent/tools-mcp's OAuth tests:
// its MCP endpoint answers 401 with `WWW-Authenticate: Bearer … resource_metadata="…"`). On a
// terminal the browser signs in; in a run nobody can sign in from, the server is skipped at once
// (it waited for a browser that could never come back before).
import { execFileSync } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
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
  // Outside the folder the CLI runs in: a browser program there is refused (the workspace could
  // have planted it; see browser-program.test.ts), and the sign-in would wait for ever.
  const browserDir = await mkdtemp(join(tmpdir(), 'agent-cli-browser-'));
  cleanups.push(() => rm(browserDir, { recursive: true, force: true }));
  const browser = join(browserDir, 'browser.mjs');
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
  `mcp secure: needs authorization, skipped: ${why}. To authorise it, run agent mcp login secure where you can sign in`;
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

describe('agent mcp login <server>', () => {
  it('signs in in the browser and keeps the token; a later run with no terminal, in CI, uses it', async () => {
    const run = await setup();
    const config = run.args.slice(0, 2);
    const login = await runCli(['mcp', 'login', 'secure', '--cwd', run.workspace, ...config], {
      cwd: run.dir,
      env: run.env(),
    });
    expect(login.stderr).toMatch(
      /mcp secure needs authorization: opened in your browser; if it did not open, visit http:\/\/127\.0\.0\.1:\d+\/authorize\?/,
    );
    expect(login.stderr).toContain(
      `mcp secure: signed in; the token is kept in ${join(run.home, 'mcp-tokens.json')} for later runs`,
    );
    expect(login.code).toBe(0);
    expect(await run.browserOpened()).toHaveLength(1);
    expect((await stat(join(run.home, 'mcp-tokens.json'))).mode & 0o777).toBe(0o600);
    expect(login.stdout + login.stderr).not.toMatch(/access_token|refresh_token/);

    const script = await writeScript(run.dir, [
      { toolCalls: [{ name: 'secure__whoami', arguments: {} }] },
      { text: 'Used the kept token.' },
    ]);
    const later = await runCli(
      ['--scripted', script, '--cwd', run.workspace, ...run.args, '-p', 'who am I'],
      { cwd: run.dir, env: run.env({ CI: 'true' }) },
    );
    expect(later.code).toBe(0);
    expect(later.stderr).not.toContain('needs authorization');
    expect((await run.results())[0]).toEqual([
      'secure__whoami',
      expect.stringContaining('mcp:tools'),
    ]);

    // Again: nothing to do, no browser.
    const again = await runCli(['mcp', 'login', 'secure', '--cwd', run.workspace, ...config], {
      cwd: run.dir,
      env: run.env(),
    });
    expect(again.code).toBe(0);
    expect(again.stderr).toContain('mcp secure: already signed in');
    expect(await run.browserOpened()).toHaveLength(1);
    expect(run.oauth.provider.stats.authorizations).toBe(1);
  });

  it.each([
    ['a symlink to a file someone else reads', 'is a symlink, not a regular file'],
    ['a FIFO (it held the sign-in for ever)', 'is a fifo, not a regular file'],
    ['a corrupt file (it was replaced, losing other servers)', 'is not JSON'],
  ])('a token file planted as %s: exit 1 naming it, nothing written through', async (what, why) => {
    const run = await setup();
    await mkdir(run.home, { recursive: true, mode: 0o700 });
    const file = join(run.home, 'mcp-tokens.json');
    const elsewhere = join(run.dir, 'elsewhere.json');
    if (what.startsWith('a symlink')) {
      await writeFile(elsewhere, '{}', { mode: 0o600 });
      await symlink(elsewhere, file);
    } else if (what.startsWith('a FIFO')) execFileSync('mkfifo', ['-m', '600', file]);
    else await writeFile(file, '{"other": {"tokens": ', { mode: 0o600 });
    const login = await runCli(
      ['mcp', 'login', 'secure', '--cwd', run.workspace, ...run.args.slice(0, 2)],
      { cwd: run.dir, env: run.env() },
    );
    expect(login.code).toBe(1);
    expect(login.stderr).toContain(`The MCP token file ${file} ${why}`);
    expect(await run.browserOpened()).toEqual([]);
    if (what.startsWith('a symlink')) expect(await readFile(elsewhere, 'utf8')).toBe('{}');
    if (what.startsWith('a corrupt'))
      expect(await readFile(file, 'utf8')).toBe('{"other": {"tokens": ');
  });

  it.each([
    ['nosuch', 'No MCP server "nosuch" (there are: secure, fixture)'],
    [
      'fixture',
      'mcp fixture is started as a command, not reached at a URL: there is no sign-in for it',
    ],
  ])('%s: exit 1, saying why', async (name, why) => {
    const run = await setup();
    const result = await runCli(
      ['mcp', 'login', name, '--cwd', run.workspace, ...run.args.slice(0, 2)],
      { cwd: run.dir, env: run.env() },
    );
    expect(result.code).toBe(1);
    expect(result.stderr).toBe(`agent: ${why}\n`);
    expect(await run.browserOpened()).toEqual([]);
  });

  it("a server of the folder's own .mcp.json: found once the folder is trusted (--trust)", async () => {
    const run = await setup();
    await writeFile(
      join(run.workspace, '.mcp.json'),
      JSON.stringify({ mcpServers: { project: { url: run.oauth.url } } }),
    );
    const untrusted = await runCli(['mcp', 'login', 'project', '--cwd', run.workspace], {
      cwd: run.dir,
      env: run.env(),
    });
    expect(untrusted.code).toBe(1);
    expect(untrusted.stderr).toContain(
      `No MCP server "project": none is configured (--mcp-config, settings, .mcp.json) (this folder's own configuration is not trusted: agent trust, or --trust for this once)`,
    );
    const trusted = await runCli(['mcp', 'login', 'project', '--cwd', run.workspace, '--trust'], {
      cwd: run.dir,
      env: run.env(),
    });
    expect(trusted.stderr).toContain('mcp project: signed in');
    expect(trusted.code).toBe(0);
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
