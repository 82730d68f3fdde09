import { type ChildProcess, spawn } from 'node:child_process';
import * as fs from 'node:fs';
import { chmod, mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
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

// However the CLI ends — SIGINT, SIGHUP, SIGTERM, an uncaught error — during start-up while MCP
// servers still connect, during a run, or at the REPL's prompt, no MCP server or language server
// it started is left running (reparented to init). Every process the session starts carries a
// tag in its environment (the MCP servers through their config's `env`), found in /proc.

beforeAll(() => {
  assertBuilt();
});
const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const tagVariable = 'AGENT_EXIT_TEST_TAG';
/** Where the stubborn server of a tag says it is ready. */
const readyFile = (tag: string) => join(tmpdir(), `${tag}-stubborn-ready`);
let counter = 0;
const waitOptions = screenWaitOptions;

/** Live (not zombie) processes whose environment holds `tag`. */
function tagged(tag: string): { pid: number; command: string }[] {
  const found: { pid: number; command: string }[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (/\) [ZX] /.test(fs.readFileSync(`/proc/${entry}/stat`, 'utf8'))) continue;
      const environment = fs.readFileSync(`/proc/${entry}/environ`, 'utf8');
      if (!environment.split('\0').includes(`${tagVariable}=${tag}`)) continue;
      const command = fs
        .readFileSync(`/proc/${entry}/cmdline`, 'utf8')
        .replaceAll('\0', ' ')
        .trim();
      // The tmux server that hosts a REPL test's terminal has the tag too; it is the test's.
      if (command.startsWith('tmux ')) continue;
      found.push({ pid: Number(entry), command });
    } catch {
      // Gone meanwhile, or not ours to read.
    }
  }
  return found;
}

/** Kills whatever a failed test left behind, so one failure does not leak into the machine. */
function killTagged(tag: string): void {
  for (const { pid } of tagged(tag)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
}

/** A workspace whose MCP servers and language server are tagged; `stuck` adds a server that never answers. */
async function setup(options: { stuck?: boolean; lsp?: boolean } = {}) {
  counter += 1;
  const tag = `exit-${process.pid}-${counter}`;
  const dir = await tempDir('agent-cli-exit-');
  cleanups.push(dir.dispose);
  cleanups.push(() => killTagged(tag));
  cleanups.push(() => fs.rmSync(readyFile(tag), { force: true }));
  const workspace = join(dir.path, 'ws');
  await mkdir(workspace);
  const servers: Record<string, unknown> = {
    env: {
      command: process.execPath,
      args: [join(appDir, 'src/__fixtures__/env-server.mjs')],
      env: { [tagVariable]: tag },
    },
    // Ignores SIGTERM and the end of its stdin: only SIGKILL stops it.
    stubborn: {
      command: process.execPath,
      args: [join(appDir, 'src/__fixtures__/env-server.mjs'), '--stubborn'],
      env: { [tagVariable]: tag, STUBBORN_READY_FILE: readyFile(tag) },
    },
  };
  if (options.stuck === true)
    servers.stuck = { command: 'sleep', args: ['1000'], env: { [tagVariable]: tag } };
  const mcpConfig = join(dir.path, 'mcp.json');
  await writeFile(mcpConfig, JSON.stringify({ mcpServers: servers }));
  if (options.lsp === true) {
    // The workspace's node_modules/.bin holds pyright-langserver (the one @agent/tools-lsp installs).
    const lspPackage = dirname(
      createRequire(import.meta.url).resolve('@agent/tools-lsp/package.json'),
    );
    const bin = join(workspace, 'node_modules', '.bin');
    await mkdir(bin, { recursive: true });
    await writeFile(
      join(bin, 'pyright-langserver'),
      `#!/bin/sh\nexec "${join(lspPackage, 'node_modules', '.bin', 'pyright-langserver')}" "$@"\n`,
    );
    await chmod(join(bin, 'pyright-langserver'), 0o755);
    await writeFile(join(workspace, 'app.py'), 'print(1 + 2)\n');
  }
  const env = cleanEnv({
    [tagVariable]: tag,
    AGENT_HOME: join(dir.path, 'home'),
    PATH: [dirname(process.execPath), '/usr/bin', '/bin'].join(':'),
  });
  return { tag, dir: dir.path, workspace, mcpConfig, env };
}

/** The built CLI with `-p`, optionally behind the fixture that fails it on SIGUSR2. */
function startPrint(
  args: readonly string[],
  env: Record<string, string>,
  failure?: 'uncaught' | 'rejection',
): { child: ChildProcess; exited: Promise<number | null>; stderr: () => string } {
  const preload =
    failure === undefined ? [] : ['--import', join(appDir, 'src/__fixtures__/fail-on-sigusr2.mjs')];
  const child = spawn(process.execPath, [...preload, cliPath, ...args], {
    env: failure === 'rejection' ? { ...env, AGENT_TEST_FAILURE: 'rejection' } : env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  cleanups.push(() => {
    child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  child.stdout?.resume();
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return { child, exited, stderr: () => stderr };
}

/**
 * Waits until processes with `tag` run whose command lines match each of `patterns`, and the
 * stubborn server said it ignores SIGTERM (before that, SIGTERM would still end it).
 */
async function waitForProcesses(tag: string, patterns: readonly RegExp[]): Promise<void> {
  await vi.waitFor(() => {
    const found = tagged(tag);
    for (const pattern of patterns)
      expect(found.some(({ command }) => pattern.test(command))).toBe(true);
    expect(fs.existsSync(readyFile(tag))).toBe(true);
  }, waitOptions);
}

/** Waits until no process with `tag` is left (a killed process takes a moment to be reaped). */
async function expectNoneLeft(tag: string): Promise<void> {
  await vi.waitFor(() => expect(tagged(tag)).toEqual([]), { timeout: 10_000, interval: 50 });
}

type Ending = 'SIGINT' | 'SIGHUP' | 'SIGTERM' | 'an uncaught error' | 'an unhandled rejection';

/** The failure the fixture injects for an ending, if it is not a plain signal. */
function failureOf(how: Ending): 'uncaught' | 'rejection' | undefined {
  if (how === 'an uncaught error') return 'uncaught';
  if (how === 'an unhandled rejection') return 'rejection';
  return undefined;
}

/** Ends the CLI: the signal itself, or SIGUSR2 for the fixture to fail it. */
function end(child: ChildProcess, how: Ending): void {
  child.kill(failureOf(how) === undefined ? (how as NodeJS.Signals) : 'SIGUSR2');
}

describe('-p: start-up, while the MCP servers are still connecting', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGHUP', 129],
    ['SIGTERM', 143],
    ['an uncaught error', 1],
    ['an unhandled rejection', 1],
  ] as const)('%s: exit %i, no MCP server left', async (how, expected) => {
    const { tag, dir, workspace, mcpConfig, env } = await setup({ stuck: true });
    const script = await writeScript(dir, [{ text: 'never reached' }]);
    const failure = failureOf(how);
    const cli = startPrint(
      ['-p', 'hi', '--scripted', script, '--cwd', workspace, '--mcp-config', mcpConfig],
      env,
      failure,
    );
    // Both servers run; "stuck" never answers, so the CLI is still starting.
    await waitForProcesses(tag, [/^sleep 1000/, /env-server\.mjs$/, /env-server\.mjs --stubborn/]);
    end(cli.child, how);
    expect(await cli.exited, cli.stderr()).toBe(expected);
    expect(cli.stderr()).not.toContain('never reached');
    await expectNoneLeft(tag);
  });
});

describe('-p: during a run, with an MCP server and a language server running', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGHUP', 129],
    ['SIGTERM', 130],
    ['an uncaught error', 1],
  ] as const)('%s: exit %i, no server left', async (how, expected) => {
    const { tag, dir, workspace, mcpConfig, env } = await setup({ lsp: true });
    const script = await writeScript(dir, [
      { toolCalls: [{ name: 'lsp_diagnostics', arguments: { path: 'app.py' } }] },
      { toolCalls: [{ name: 'env__names', arguments: {} }] },
      { toolCalls: [{ name: 'bash', arguments: { command: 'exec sleep 1001' } }] },
      { text: 'never reached' },
    ]);
    const failure = failureOf(how);
    const cli = startPrint(
      [
        '-p',
        'go',
        '--scripted',
        script,
        '--cwd',
        workspace,
        // The folder's own language server (node_modules/.bin) runs only in a trusted folder.
        '--trust',
        '--mcp-config',
        mcpConfig,
        '--mode',
        'full-access',
      ],
      env,
      failure,
    );
    await waitForProcesses(tag, [
      /env-server\.mjs$/,
      /env-server\.mjs --stubborn/,
      /pyright/,
      /^sleep 1001/,
    ]);
    end(cli.child, how);
    expect(await cli.exited, cli.stderr()).toBe(expected);
    await expectNoneLeft(tag);
  });
});

describe('interactive session (tmux)', () => {
  beforeEach(skipWithout('tmux'));
  async function startRepl(
    setupOptions: { stuck?: boolean; lsp?: boolean },
    steps: unknown[] = [{ text: 'never reached' }],
  ) {
    const context = await setup(setupOptions);
    const script = await writeScript(context.dir, steps);
    const tmux = TmuxSession.start(
      [
        process.execPath,
        cliPath,
        '--scripted',
        script,
        '--cwd',
        context.workspace,
        '--trust',
        '--mcp-config',
        context.mcpConfig,
        '--mode',
        'full-access',
      ],
      { cwd: context.dir, env: context.env },
    );
    cleanups.push(() => tmux.kill());
    const exitStatus = () => tmux.waitForExit();
    const waitForPrompt = () => tmux.waitForPrompt();
    /** The CLI's own pid: the tagged node process running main.js. */
    const cliPid = () => {
      // Not the shell around it, whose command line names main.js too.
      const found = tagged(context.tag).find((candidate) =>
        candidate.command.startsWith(`${process.execPath} ${cliPath}`),
      );
      if (found === undefined) throw new Error('the CLI is not running');
      return found.pid;
    };
    return { ...context, tmux, exitStatus, waitForPrompt, cliPid };
  }

  it('Ctrl-C during start-up, while an MCP server is still connecting: exit 130, no server left', async () => {
    const repl = await startRepl({ stuck: true });
    await waitForProcesses(repl.tag, [
      /^sleep 1000/,
      /env-server\.mjs$/,
      /env-server\.mjs --stubborn/,
    ]);
    repl.tmux.press('C-c');
    expect(await repl.exitStatus()).toBe(130);
    await expectNoneLeft(repl.tag);
  });

  it.each([
    ['SIGHUP', 129],
    ['SIGTERM', 143],
    ['SIGINT', 130],
  ] as const)(
    '%s at the prompt, after a run that started a language server: exit %i, no server left',
    async (name, expected) => {
      const repl = await startRepl({ lsp: true }, [
        { toolCalls: [{ name: 'lsp_diagnostics', arguments: { path: 'app.py' } }] },
        { text: 'Checked.' },
      ]);
      await repl.waitForPrompt();
      repl.tmux.type('check app.py');
      repl.tmux.press('Enter');
      await vi.waitFor(() => expect(repl.tmux.capture()).toContain('Checked.'), waitOptions);
      await repl.waitForPrompt();
      await waitForProcesses(repl.tag, [
        /env-server\.mjs$/,
        /env-server\.mjs --stubborn/,
        /pyright/,
      ]);
      process.kill(repl.cliPid(), name);
      expect(await repl.exitStatus()).toBe(expected);
      await expectNoneLeft(repl.tag);
    },
  );

  it('the terminal closed during a run: no server left', async () => {
    const repl = await startRepl({}, [
      { toolCalls: [{ name: 'bash', arguments: { command: 'exec sleep 1002' } }] },
      { text: 'never reached' },
    ]);
    await repl.waitForPrompt();
    repl.tmux.type('sleep');
    repl.tmux.press('Enter');
    await waitForProcesses(repl.tag, [
      /env-server\.mjs$/,
      /env-server\.mjs --stubborn/,
      /^sleep 1002/,
    ]);
    // Killing tmux closes the pane's terminal: the CLI gets SIGHUP.
    repl.tmux.kill();
    await expectNoneLeft(repl.tag);
  });
});
