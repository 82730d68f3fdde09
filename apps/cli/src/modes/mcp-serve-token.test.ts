// Where `agent mcp serve --http` hands out the token it generated: printed on a terminal only.
// Anywhere else its reader may not be the user — `2>&1 | tee serve.log` under umask 022 gave the
// token to every user of the machine, and a pipe was trusted — so it goes to
// $AGENT_HOME/mcp-serve/<port>.token (0600, folder 0700), stderr names the file, and the file is
// removed when the server stops. Real CLI processes; a tmux pane for the terminal.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, readdirSync, statSync, watch } from 'node:fs';
import { chmod, chown, mkdir, open, readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServe } from '../testing/mcp-serve-support.js';
import {
  assertBuilt,
  cleanEnv,
  cliPath,
  runCli,
  TmuxSession,
  tempDir,
} from '../testing/test-support.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});
beforeAll(() => assertBuilt());

async function workspace(): Promise<string> {
  const dir = await tempDir('agent-mcp-serve-token-');
  cleanups.push(dir.dispose);
  return dir.path;
}

const tokenFileLine = /Clients must send the bearer token in (.+?), new for this run/;

/** The token file's path, its content and modes; and that the token is accepted. */
async function checkTokenFile(stderr: string, url: string): Promise<string> {
  const file = tokenFileLine.exec(stderr)?.[1];
  expect(file, stderr).toBeDefined();
  const path = file ?? '';
  expect(path).toBe(join(cleanEnv().AGENT_HOME ?? '', 'mcp-serve', `${new URL(url).port}.token`));
  expect(statSync(path).mode & 0o777).toBe(0o600);
  expect(statSync(dirname(path)).mode & 0o777).toBe(0o700);
  const token = (await readFile(path, 'utf8')).trim();
  expect(token).toMatch(/^[A-Za-z0-9_-]{43}$/);
  expect(stderr).not.toContain(token);
  expect(stderr).toContain(`"Authorization":"Bearer <the token in ${path}>"`);
  const listed = await fetch(url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(listed.status).toBe(200);
  return path;
}

describe('agent mcp serve --http: a new token is printed on a terminal only', () => {
  it('stderr a pipe (| tee): not on it, but in a file only you can read, removed at the stop', async () => {
    const cwd = await workspace();
    const server = await startHttpServe(['--cwd', cwd]);
    cleanups.push(server.stop);
    const path = await checkTokenFile(server.stderr(), server.url);
    await server.stop();
    expect(existsSync(path)).toBe(false);
  });

  /**
   * `agent mcp serve --http` with its stderr in `log` (opened to append): what it wrote there once
   * it exited or printed its last start-up line, and its exit code (null while it serves).
   */
  async function serveIntoFile(cwd: string, log: string) {
    const stderr = await open(log, 'a');
    cleanups.push(() => stderr.close());
    const child = spawn(process.execPath, [cliPath, 'mcp', 'serve', '--http', '--cwd', cwd], {
      env: cleanEnv(),
      stdio: ['ignore', 'ignore', stderr.fd],
    });
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    cleanups.push(async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    });
    const watcher = watch(log);
    cleanups.push(async () => watcher.close());
    let gone = false;
    void exited.then(() => {
      gone = true;
    });
    for (;;) {
      // Armed before the read: a write during it is not missed.
      const changed = once(watcher, 'change');
      if (gone || (await readFile(log, 'utf8')).includes('MCP Inspector CLI')) break;
      await Promise.race([changed, exited]);
    }
    return { written: await readFile(log, 'utf8'), code: child.exitCode };
  }

  it.each([
    ['open to others', 0o644, false],
    ['open to its group', 0o640, false],
    ['only you can read', 0o600, false],
    ["another user's, even private", 0o600, true],
  ] as const)('stderr in a file %s: served, the token in its own file', async (_, mode, theirs) => {
    if (theirs && process.getuid?.() !== 0) return; // Only root can hand a file to another user.
    const cwd = await workspace();
    const log = join(cwd, 'serve.log');
    await writeFile(log, '', { mode });
    await chmod(log, mode);
    if (theirs) await chown(log, 54_321, 54_321);
    const { written, code } = await serveIntoFile(cwd, log);
    expect(code, written).toBeNull();
    expect(written).not.toMatch(/Bearer [A-Za-z0-9_-]{43}/);
    const url = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(written)?.[1] ?? '';
    await checkTokenFile(written, url);
  });

  it('a home it cannot write the token into: refused, naming the way around it, nothing printed', async () => {
    const cwd = await workspace();
    // A file where the folder would go: no folder, whoever runs it (root included).
    const home = join(cwd, 'home');
    await mkdir(home, { mode: 0o700 });
    await writeFile(join(home, 'mcp-serve'), '');
    const run = await runCli(['mcp', 'serve', '--http', '--cwd', cwd], {
      env: cleanEnv({ AGENT_HOME: home }),
    });
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(
      `agent mcp serve: the new token cannot be written to ${join(home, 'mcp-serve')} (`,
    );
    expect(run.stderr).toContain('pass --token-file <file>, or start it at a terminal');
    expect(run.stderr).not.toMatch(/Bearer [A-Za-z0-9_-]{43}/);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  it('a terminal: the token is printed there, once per line that uses it, and no file is written', async () => {
    const cwd = await workspace();
    const tmux = TmuxSession.start(
      [process.execPath, cliPath, 'mcp', 'serve', '--http', '--cwd', cwd],
      { cwd, env: cleanEnv() },
    );
    cleanups.push(async () => tmux.kill());
    await tmux.waitForText('MCP Inspector CLI');
    const screen = tmux.capture();
    const token = /new for this run \(shown once\): Authorization: Bearer (\S+)/.exec(screen)?.[1];
    expect(token, screen).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(screen.split(token ?? '').length - 1).toBe(3);
    const port = /127\.0\.0\.1:(\d+)\/mcp/.exec(screen)?.[1];
    const folder = join(cleanEnv().AGENT_HOME ?? '', 'mcp-serve');
    expect(existsSync(folder) ? readdirSync(folder) : []).not.toContain(`${port}.token`);
  });
});
