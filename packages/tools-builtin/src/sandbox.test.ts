import * as fs from 'node:fs';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as net from 'node:net';
import * as path from 'node:path';
import { PermissionPolicy } from '@agent/core';
import { createSandbox, SandboxUnavailableError } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { createBashOutputTool } from './bash-output-tool.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

// The OS sandbox under the real bash tool (bubblewrap; `.ci/run` installs it). Rules decide what
// to ask; this decides what can happen — so every check here runs a real command and looks at
// the host afterwards.

let ws: string;
let outside: string;
let home: string;
let server: http.Server;
let port: number;
const cleanups: (() => Promise<void> | void)[] = [];
let background: BackgroundTasks;

beforeAll(async () => {
  server = http.createServer((_request, response) => response.end('hello from the host\n'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

function setup(
  sandbox: Parameters<typeof createBashTool>[0]['sandbox'] = {},
  more: { env?: NodeJS.ProcessEnv; reuseSandbox?: boolean } = {},
) {
  ws = makeTempDir('sandbox-ws-');
  outside = makeTempDir('sandbox-outside-');
  home = makeTempDir('sandbox-home-');
  fs.mkdirSync(path.join(home, '.ssh'));
  fs.writeFileSync(path.join(home, '.ssh', 'id_ed25519'), 'PRIVATE KEY');
  fs.writeFileSync(path.join(home, '.netrc'), 'machine x password hunter2');
  background = new BackgroundTasks();
  cleanups.push(async () => {
    await background.killAll();
    for (const dir of [ws, outside, home]) fs.rmSync(dir, { recursive: true, force: true });
  });
  const options =
    typeof sandbox === 'object' && !('wrap' in sandbox)
      ? {
          secretPaths: [path.join(home, '.ssh'), path.join(home, '.netrc')],
          ...sandbox,
        }
      : sandbox;
  return createBashTool({
    cwd: ws,
    spillDir: path.join(ws, '.spill'),
    backgroundTasks: background,
    sandbox: options,
    ...more,
  });
}

async function run(tool: ReturnType<typeof setup>, command: string) {
  const result = await tool.execute({ command }, testContext());
  return { text: resultText(result), details: result.details };
}

/** This process's sandbox helpers (other tests on the machine run theirs): descendants running exec-helper. */
function ownHelpers(): number[] {
  const parentOf = (pid: string): number | undefined => {
    try {
      const status = fs.readFileSync(`/proc/${pid}/status`, 'latin1');
      const found = /^PPid:\s+(\d+)$/m.exec(status)?.[1];
      return found === undefined ? undefined : Number(found);
    } catch {
      return undefined;
    }
  };
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        return fs.readFileSync(`/proc/${entry}/cmdline`, 'latin1').includes('exec-helper.cjs');
      } catch {
        return false;
      }
    })
    .filter((entry) => {
      for (let pid = parentOf(entry); pid !== undefined && pid > 1; pid = parentOf(String(pid)))
        if (pid === process.pid) return true;
      return false;
    })
    .map(Number);
}

describe('bash in the OS sandbox', () => {
  beforeEach(skipWithout('bwrap'));
  it('says in its description that commands are sandboxed', () => {
    const bash = setup();
    expect(bash.description).toContain('sandboxed (bubblewrap)');
    expect(bash.description).toContain('no network');
  });

  it('the workspace stays writable; writes anywhere else fail, and the result says the sandbox blocked them', async () => {
    const bash = setup();
    const { text, details } = await run(
      bash,
      `echo kept > inside.txt; echo x > "${outside}/escaped.txt"; echo y > /etc/agent-sandbox-test; cd / && touch "${outside}/via-cd"`,
    );
    expect(details?.sandboxed).toBe(true);
    expect(fs.readFileSync(path.join(ws, 'inside.txt'), 'utf8')).toBe('kept\n');
    expect(fs.existsSync(path.join(outside, 'escaped.txt'))).toBe(false);
    expect(fs.existsSync(path.join(outside, 'via-cd'))).toBe(false);
    expect(fs.existsSync('/etc/agent-sandbox-test')).toBe(false);
    expect(text).toContain('Read-only file system');
    expect(text).toContain('Blocked by the sandbox: writes outside');
    expect(details?.sandboxBlocked).toMatch(/^Blocked by the sandbox: writes outside/);
  });

  it('a symlink from the workspace to outside does not open a way out', async () => {
    const bash = setup();
    fs.symlinkSync(outside, path.join(ws, 'link'));
    await run(bash, 'echo x > link/through-link.txt; ln -s /etc etc2; echo y > etc2/agent-x');
    expect(fs.existsSync(path.join(outside, 'through-link.txt'))).toBe(false);
    expect(fs.existsSync('/etc/agent-x')).toBe(false);
  });

  it('/tmp and /dev/shm are private to the command: nothing reaches the host', async () => {
    const bash = setup();
    const marker = `agent-sandbox-${process.pid}-${Date.now()}`;
    const { text } = await run(
      bash,
      `echo x > /tmp/${marker} && echo y > /dev/shm/${marker} && cat /tmp/${marker} && echo TMPDIR=$TMPDIR`,
    );
    expect(text).toContain('x\nTMPDIR=/tmp');
    expect(fs.existsSync(`/tmp/${marker}`)).toBe(false);
    expect(fs.existsSync(`/dev/shm/${marker}`)).toBe(false);
  });

  it.each([
    ['a sandbox per command', false],
    ['the long-lived sandbox', true],
  ])(
    '%s: the command carries its run marker, and no loader variable of its environment acts outside',
    async (_name, reuseSandbox) => {
      // The sandbox sets the command's environment inside (bwrap), from what wrap() was given:
      // the marker the tool uses to find a run's processes must be in it, not added afterwards.
      const logs = makeTempDir('sandbox-loader-');
      cleanups.push(() => fs.rmSync(logs, { recursive: true, force: true }));
      const output = path.join(logs, 'ld');
      const bash = setup(
        {},
        {
          env: { PATH: process.env.PATH, LD_DEBUG: 'libs', LD_DEBUG_OUTPUT: output },
          reuseSandbox,
        },
      );
      const { text } = await run(
        bash,
        'printf "marker=%s\\n" "$AGENT_TOOLS_BUILTIN_RUN"; printf "debug=%s\\n" "$LD_DEBUG_OUTPUT"',
      );
      expect(text).toMatch(/^marker=[0-9a-f-]+\.[0-9a-f-]+$/m);
      expect(text).toContain(`debug=${output}`);
      // The loader wrote no log outside the sandbox (inside, the folder is read-only).
      expect(fs.readdirSync(logs)).toEqual([]);
    },
  );

  it("the host's unix sockets in /tmp and /run (agents, tmux, docker, dbus) cannot be reached", async (context) => {
    // Without socat the command would say REFUSED for the wrong reason.
    skipWithout('socat')(context);
    const bash = setup();
    const socketPath = path.join(outside, 'agent.sock');
    const listener = net.createServer((socket) => socket.end('hello from the host socket\n'));
    await new Promise<void>((resolve) => listener.listen(socketPath, resolve));
    cleanups.push(() => new Promise<void>((resolve) => listener.close(() => resolve())));
    const { text } = await run(
      bash,
      `socat - UNIX-CONNECT:${socketPath} </dev/null || echo REFUSED; ls -A /run | wc -l`,
    );
    expect(text).not.toContain('hello from the host socket');
    expect(text).toContain('REFUSED');
    expect(text).toMatch(/^0$/m);
  });

  it('secret paths cannot be read', async () => {
    const bash = setup();
    const { text } = await run(
      bash,
      `cat "${home}/.ssh/id_ed25519"; cat "${home}/.netrc"; ls -A "${home}/.ssh" | wc -l`,
    );
    expect(text).not.toContain('PRIVATE KEY');
    expect(text).not.toContain('hunter2');
    expect(text).toContain('Blocked by the sandbox: credential paths are hidden');
  });

  it('network off: a server on 127.0.0.1 cannot be reached', async (context) => {
    skipWithout('curl')(context);
    const bash = setup();
    const { text } = await run(bash, `curl -sS -m 5 http://127.0.0.1:${port}/ || echo CURL_FAILED`);
    expect(text).not.toContain('hello from the host');
    expect(text).toContain('CURL_FAILED');
  });

  it('network allow-listed: an allowed host is reached, any other is refused', async (context) => {
    // socat carries the allow-listed network to the proxy.
    skipWithout('curl', 'socat')(context);
    const allowed = setup({ network: { allowHosts: ['127.0.0.1'] } });
    const ok = await run(allowed, `curl -sS -m 10 http://127.0.0.1:${port}/`);
    expect(ok.text).toContain('hello from the host');

    const other = setup({ network: { allowHosts: ['example.invalid'] } });
    const refused = await run(other, `curl -sS -m 10 http://127.0.0.1:${port}/`);
    expect(refused.text).not.toContain('hello from the host');
    expect(refused.text).toContain(
      'Blocked by the sandbox proxy: 127.0.0.1 is not an allowed host',
    );
  });

  it('a setsid / daemonised grandchild is confined too, and does not outlive the call', async () => {
    const bash = setup();
    const tag = `3${process.pid % 1000}.${Date.now() % 1000}`;
    const { text } = await run(
      bash,
      `setsid sh -c 'sleep 0.2; echo late > "${outside}/daemon.txt"; exec sleep ${tag}' & ` +
        `(nohup sh -c 'exec sleep ${tag}' >/dev/null 2>&1 &); sh -c 'sh -c "exec sleep ${tag}" &' ; echo started`,
    );
    expect(text).toContain('started');
    // Nothing of the command is left: the sandbox's pid namespace ended with it.
    const survivors = fs
      .readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((entry) => {
        try {
          return fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(tag);
        } catch {
          return false;
        }
      });
    expect(survivors).toEqual([]);
    expect(fs.existsSync(path.join(outside, 'daemon.txt'))).toBe(false);
  });

  it('background jobs run in the sandbox too', async () => {
    const bash = setup();
    const started = await bash.execute(
      { command: `echo bg > "${outside}/bg.txt"; echo done-bg`, run_in_background: true },
      testContext(),
    );
    expect(resultText(started)).toContain('Started in background');
    const task = background.get(started.details?.taskId ?? '');
    expect(task).toBeDefined();
    // Wait for the task to end (an event, not a sleep: its outcome promise).
    await task?.handle.done;
    expect(task?.stdout.snapshot().text).toContain('done-bg');
    // The host's /tmp is not even visible (the command has a private one): the write fails.
    expect(task?.stderr.snapshot().text).toMatch(/Read-only file system|No such file or directory/);
    expect(fs.existsSync(path.join(outside, 'bg.txt'))).toBe(false);

    // Read back with bash_output, a failure the sandbox caused says so.
    const blocked = await bash.execute(
      { command: 'touch /etc/agent-sandbox-bg-test', run_in_background: true },
      testContext(),
    );
    const blockedId = blocked.details?.taskId ?? '';
    await background.get(blockedId)?.handle.done;
    const read = await createBashOutputTool({ backgroundTasks: background }).execute(
      { task_id: blockedId },
      testContext(),
    );
    expect(read.isError).toBe(true);
    expect(resultText(read)).toContain('Blocked by the sandbox: writes outside');
    expect(read.details?.sandboxBlocked).toMatch(/^Blocked by the sandbox/);
    expect(fs.existsSync('/etc/agent-sandbox-bg-test')).toBe(false);

    // A repository a background command made is named when its output is read.
    const planting = await bash.execute(
      { command: 'git init -q background/repo', run_in_background: true },
      testContext(),
    );
    const plantingId = planting.details?.taskId ?? '';
    await background.get(plantingId)?.handle.done;
    const planted = await createBashOutputTool({ backgroundTasks: background }).execute(
      { task_id: plantingId },
      testContext(),
    );
    expect(planted.details?.sandboxPlanted).toEqual([path.join(ws, 'background/repo/.git')]);
    expect(resultText(planted)).toContain('Tell the user');
  });

  it('a repository a command makes is reported in its result, once, and read-only from the next command on', async () => {
    const bash = setup();
    const first = await run(bash, 'echo plain > notes.txt');
    expect(first.details?.sandboxPlanted).toBeUndefined();
    const made = await run(
      bash,
      'git init -q vendor/lib && printf "[core]\\n\\tfsmonitor = touch /var/tmp/x\\n" >> vendor/lib/.git/config && echo made',
    );
    expect(made.details?.sandboxPlanted).toEqual([path.join(ws, 'vendor/lib/.git')]);
    expect(made.text).toContain(`Sandboxed commands made ${path.join(ws, 'vendor/lib/.git')}`);
    expect(made.text).toContain('Tell the user');
    const next = await run(bash, 'echo "#!/bin/sh" > vendor/lib/.git/hooks/post-checkout');
    expect(next.details?.sandboxPlanted).toBeUndefined();
    expect(next.text).toContain("a repository's .git is read-only");
    expect(fs.existsSync(path.join(ws, 'vendor/lib/.git/hooks/post-checkout'))).toBe(false);
  });

  it('a repository hidden among more directories than a check reads: the result says the look was cut short', async () => {
    const bash = setup();
    const flood = await run(
      bash,
      'mkdir flood && cd flood && seq -f d%05.0f 1 10100 | xargs mkdir && git init -q d10100/x && echo FLOODED',
    );
    expect(flood.text).toContain('FLOODED');
    expect(flood.text).toMatch(
      /The sandbox could not look through everything sandboxed commands changed \(the search for repositories made by commands stopped after/,
    );
    expect(flood.text).toContain('Tell the user to look before running git');
    let found = flood.details?.sandboxPlanted ?? [];
    // Each check reads for at most 400 ms and the next goes on where it stopped: a few checks on
    // an idle machine, more on a loaded one (the property is that one of them finds it).
    for (
      let attempt = 0;
      attempt < 60 && !found.includes(path.join(ws, 'flood/d10100/x/.git'));
      attempt++
    ) {
      found = [...found, ...((await run(bash, 'true')).details?.sandboxPlanted ?? [])];
    }
    expect(found).toContain(path.join(ws, 'flood/d10100/x/.git'));
  });

  it('running outside the sandbox is its own permission: always asked, even where rules allow the command', async () => {
    const bash = setup();
    const subjects = await bash.permissionSubjects?.({
      command: 'echo hi',
      dangerouslyDisableSandbox: true,
    });
    expect(subjects).toEqual({
      subjects: ['echo hi'],
      opaque: 'runs outside the OS sandbox',
      tier: 'full-access',
    });
    const policy = new PermissionPolicy({ mode: 'full-access', allow: ['bash(echo *)'] });
    const outcome = policy.evaluate({
      toolName: 'bash',
      tier: 'full-access',
      subjects: ['echo hi'],
      opaque: 'runs outside the OS sandbox',
    });
    expect(outcome.behavior).toBe('ask');
    // Once allowed, it really runs outside: the write lands.
    const result = await bash.execute(
      { command: `echo out > "${outside}/allowed.txt"`, dangerouslyDisableSandbox: true },
      testContext(),
    );
    expect(result.details?.sandboxed).toBe(false);
    expect(fs.readFileSync(path.join(outside, 'allowed.txt'), 'utf8')).toBe('out\n');
  });
});

describe('when no sandbox can run', () => {
  it('auto falls back with a visible warning, and the description says commands are NOT sandboxed', async () => {
    const warnings: string[] = [];
    const bash = setup({
      bwrapPath: '/nonexistent/bwrap',
      onWarning: (message) => warnings.push(message),
    });
    expect(warnings).toEqual([expect.stringContaining('WITHOUT an OS sandbox')]);
    expect(warnings[0]).toContain('bubblewrap is not installed');
    expect(bash.description).toContain('NOT sandboxed');
    const { details } = await run(bash, 'echo hi');
    expect(details?.sandboxed).toBe(false);
  });

  it.for([true, false])(
    'bubblewrap gone after the sandbox was made (reuseSandbox %s): each command fails, none runs unsandboxed',
    async (reuseSandbox, context) => {
      skipWithout('bwrap')(context);
      // A bubblewrap of its own (outside the workspace), removed once the sandbox uses it.
      const copy = makeTempDir('sandbox-bwrap-');
      cleanups.push(async () => fs.rmSync(copy, { recursive: true, force: true }));
      const bwrapPath = path.join(copy, 'bwrap');
      const installed = (process.env.PATH ?? '')
        .split(path.delimiter)
        .map((entry) => path.join(entry, 'bwrap'))
        .find((candidate) => fs.existsSync(candidate));
      fs.copyFileSync(fs.realpathSync(installed ?? 'bwrap'), bwrapPath);
      fs.chmodSync(bwrapPath, 0o755);
      setup();
      const bash = createBashTool({
        cwd: ws,
        backgroundTasks: background,
        reuseSandbox,
        sandbox: { mode: 'required', bwrapPath, secretPaths: [] },
      });
      expect((await run(bash, 'echo first')).details?.sandboxed).toBe(true);
      fs.rmSync(bwrapPath);
      // The long-lived sandbox's helper ended (killed from outside: its commands cannot): the
      // next one starts bwrap again.
      for (const pid of ownHelpers()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch (error) {
          // Ended between the listing and the kill (an earlier test's helper closing): gone is
          // what this wants (the official CI met it).
          if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        }
      }
      for (const attempt of ['first', 'second']) {
        const marker = path.join(outside, `ran-${attempt}`);
        let text: string;
        try {
          const result = await bash.execute({ command: `touch ${marker}` }, testContext());
          expect(result.details?.sandboxed, resultText(result)).not.toBe(false);
          text = resultText(result);
        } catch (error) {
          text = String(error);
        }
        expect(fs.existsSync(marker), text).toBe(false);
        // The first may still meet the killed helper (its end not yet seen here): lost, not
        // run again. The second starts bwrap anew, which is gone.
        expect(text).toMatch(
          attempt === 'first'
            ? /ENOENT|not found|could not start|Could not start|No such file|sandbox helper died before the command was known to start/i
            : /ENOENT|not found|could not start|Could not start|No such file/i,
        );
      }
    },
  );

  it('required refuses with a clear error', () => {
    expect(() =>
      createSandbox({ mode: 'required', writableRoots: ['/tmp'], bwrapPath: '/nonexistent/bwrap' }),
    ).toThrow(SandboxUnavailableError);
    expect(() => setup({ mode: 'required', bwrapPath: '/nonexistent/bwrap' })).toThrow(
      /The sandbox is required but cannot run: bubblewrap is not installed/,
    );
  });
});
