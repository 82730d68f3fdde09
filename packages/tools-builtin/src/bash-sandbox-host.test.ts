import * as fs from 'node:fs';
import * as path from 'node:path';
import { createSandbox } from '@agent/sandbox';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

// The bash tool's long-lived sandbox (issue 32): one sandbox per session and policy, a helper
// inside it forking each command. Real bubblewrap, real processes; nothing asserts a timing.

const sessions: BackgroundTasks[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
});

function session(
  sandbox: NonNullable<Parameters<typeof createBashTool>[0]['sandbox']>,
  cwd?: string,
) {
  const ws = cwd ?? makeTempDir('sandbox-host-ws-');
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const bash = createBashTool({
    cwd: ws,
    spillDir: path.join(ws, '.spill'),
    backgroundTasks,
    sandbox,
    killGraceMs: 200,
  });
  const run = async (command: string, signal?: AbortSignal) => {
    const result = await bash.execute(
      { command },
      testContext(signal === undefined ? {} : { signal }),
    );
    return { text: resultText(result), details: result.details, isError: result.isError };
  };
  return { ws, bash, run, backgroundTasks };
}

/** Host pids of live processes whose command line (arguments joined by spaces) contains `tag`. */
function processesWith(tag: string): number[] {
  return fs
    .readdirSync('/proc')
    .filter((entry) => /^\d+$/.test(entry))
    .filter((entry) => {
      try {
        const stat = fs.readFileSync(`/proc/${entry}/stat`, 'latin1');
        if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) return false;
        return fs
          .readFileSync(`/proc/${entry}/cmdline`, 'latin1')
          .replaceAll('\0', ' ')
          .includes(tag);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** Whether `pid` is a `sleep` itself (a shell's command line names it too until it execs). */
function isSleep(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').startsWith('sleep\0');
  } catch {
    return false;
  }
}

/** The host pid of the helper of the sandbox whose pipes are in `pipeDirectory` (its script lives there). */
function helperPid(pipeDirectory: string | undefined): number | undefined {
  if (pipeDirectory === undefined) return undefined;
  return processesWith(pipeDirectory).find((pid) => {
    const args = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0');
    return (
      args.some((arg) => arg.endsWith('/exec-helper.cjs')) && !args.includes('--die-with-parent')
    );
  });
}

describe('the bash tool in a long-lived sandbox', () => {
  beforeEach(skipWithout('bwrap'));

  it('runs every call of a session in one sandbox: a file in its private /tmp outlives the call, never reaching the host', async () => {
    const { run } = session({ mode: 'required' });
    const marker = `agent-host-${process.pid}-${Date.now()}`;
    const first = await run(`echo kept > /tmp/${marker}; echo $$`);
    const second = await run(`cat /tmp/${marker}; echo $$`);
    expect(first.details?.sandboxed).toBe(true);
    expect(second.text).toContain('kept');
    expect(fs.existsSync(`/tmp/${marker}`)).toBe(false);
  });

  it('reports stdout, stderr, exit code and signal exactly', async () => {
    const { run, ws } = session({ mode: 'required' });
    const mixed = await run('printf "out\\n"; printf "err\\n" >&2; exit 7');
    expect(mixed.details).toMatchObject({
      exitCode: 7,
      signal: null,
      stdout: 'out\n',
      stderr: 'err\n',
    });
    const killed = await run('kill -SEGV $$');
    expect(killed.details).toMatchObject({ exitCode: 139, signal: 'SIGSEGV' });
    const closedStdin = await run('cat; echo "read $?"');
    expect(closedStdin.details?.stdout).toBe('read 0\n');
    // Written faster than it is read, through the pipes (nothing dropped, no EAGAIN).
    const large = await run('seq 1 300000');
    const expected = Array.from({ length: 300000 }, (_, index) => `${index + 1}\n`).join('');
    expect(large.details?.stdoutBytes).toBe(expected.length);
    expect(large.details?.exitCode).toBe(0);
    const env = await run('echo "$TMPDIR $PWD"');
    expect(env.details?.stdout).toBe(`/tmp ${ws}\n`);
  });

  it('a command that cannot start says why (missing shell), and the next one runs', async () => {
    const ws = makeTempDir('sandbox-host-ws-');
    const backgroundTasks = new BackgroundTasks();
    sessions.push(backgroundTasks);
    const bash = createBashTool({
      cwd: ws,
      backgroundTasks,
      sandbox: { mode: 'required' },
      shell: '/nonexistent/bash',
    });
    await expect(bash.execute({ command: 'true' }, testContext())).rejects.toThrow(
      /Could not start \/nonexistent\/bash: .*ENOENT/,
    );
  });

  it('the helper killed mid-call: the call fails saying so, and the next call gets a new sandbox', async () => {
    const ws = makeTempDir('sandbox-host-ws-');
    const sandbox = createSandbox({ mode: 'required', writableRoots: [ws] });
    const { run, backgroundTasks } = session(sandbox, ws);
    const pipes = () => backgroundTasks.hostFor(sandbox)?.pipeDirectory;
    const tag = `4${process.pid % 1000}.${Date.now() % 1000}`;
    await run('true');
    const pid = helperPid(pipes());
    expect(pid).toBeDefined();
    const inFlight = run(`echo before; sleep ${tag}`);
    // Wait for the command to run (an observable state), then kill the helper from outside.
    while (!processesWith(`sleep ${tag}`).some(isSleep)) await new Promise((r) => setImmediate(r));
    process.kill(pid as number, 'SIGKILL');
    const failed = await inFlight;
    expect(failed.isError).toBe(true);
    expect(failed.text).toContain('before');
    expect(failed.text).toMatch(/sandbox died while it ran.*helper died.*(SIGKILL|code 137)/s);
    expect(processesWith(`sleep ${tag}`)).toEqual([]);
    const next = await run('echo again');
    expect(next.text).toBe('again\nExit code: 0');
    expect(helperPid(pipes())).toBeDefined();
    expect(helperPid(pipes())).not.toBe(pid);
  });

  it("a command cannot forge the helper's events or requests, nor kill the helper", async () => {
    const { run } = session({ mode: 'required' });
    await run('true');
    // The helper is the command's parent; its stdin and stdout are socket pairs, which /proc
    // does not reopen.
    const forged = await run(
      `echo '{"type":"exit","id":1,"code":0,"signal":null,"over":true}' > /proc/$PPID/fd/1 && echo FORGED-OUT; ` +
        `echo '{"type":"run","id":99,"file":"/bin/touch","args":["forged"]}' > /proc/$PPID/fd/0 && echo FORGED-IN; echo tried`,
    );
    expect(forged.text).toContain('tried');
    expect(forged.text).not.toMatch(/FORGED-(OUT|IN)/);
    // Each command is in a Landlock domain of its own (where the kernel has one: this machine's
    // does): it cannot signal the helper. A helper killed from outside is the test above.
    const suicide = await run('echo last; kill -KILL $PPID && echo KILLED; echo after');
    expect(suicide.isError).not.toBe(true);
    expect(suicide.text).toContain('last');
    expect(suicide.text).toContain('Operation not permitted');
    expect(suicide.text).not.toContain('KILLED');
    expect(suicide.text).toContain('after');
    expect((await run('echo alive')).text).toBe('alive\nExit code: 0');
  });

  // The FIFOs for later commands' output are made ahead, in a directory bound into the sandbox:
  // named p0, p1… in a listable directory, a background command opened them all and its text
  // appeared in every later command's result (the model reads it as that command's output).
  it("a background command cannot write into a later command's output", async () => {
    const { bash, run } = session({ mode: 'required' });
    await run('true');
    const forger = [
      "d=$(grep -o '/tmp/agent-sandbox-pipes-[^ ]*' /proc/self/mountinfo | head -n 1)",
      'for n in $(ls "$d" 2>/dev/null) $(seq -f "p%g" 0 400); do',
      '  if [ -p "$d/$n" ]; then (exec 3>"$d/$n" && while echo FORGED >&3; do sleep 0.1; done) 2>/dev/null & fi',
      'done',
      'touch forger-ready; wait',
    ].join('\n');
    await bash.execute({ command: forger, run_in_background: true }, testContext());
    const first = await run('while [ ! -e forger-ready ]; do sleep 0.05; done; echo real 0');
    expect(first.text).toBe('real 0\nExit code: 0');
    for (const index of [1, 2, 3])
      expect((await run(`echo real ${index}`)).text).toBe(`real ${index}\nExit code: 0`);
  });

  it('a timeout ends the whole process group (a background child too) and keeps the output so far', async () => {
    const { bash } = session({ mode: 'required' });
    const tag = `9${process.pid % 1000}.${Date.now() % 1000}`;
    const result = await bash.execute(
      { command: `echo started; sleep ${tag} & sleep ${tag}`, timeout: 300 },
      testContext(),
    );
    expect(result.isError).toBe(true);
    expect(result.details).toMatchObject({ timedOut: true, stdout: 'started\n' });
    expect(resultText(result)).toContain('Command timed out after 300 ms');
    expect(processesWith(`sleep ${tag}`)).toEqual([]);
  });

  it('two sessions with different policies side by side: separate sandboxes, each with its own roots, network and /tmp', async () => {
    const a = session({ mode: 'required' });
    const b = session({ mode: 'required', network: { allowHosts: ['example.invalid'] } });
    const script = (self: string, other: string) =>
      `echo mine > ${self}/own.txt; echo theirs > ${other}/intruder.txt 2>/dev/null || echo blocked; ` +
      `echo "proxy=$HTTP_PROXY"; ls /tmp/session-* 2>/dev/null; touch /tmp/session-$$`;
    const results = await Promise.all(
      Array.from({ length: 6 }, (_, index) =>
        index % 2 === 0 ? a.run(script(a.ws, b.ws)) : b.run(script(b.ws, a.ws)),
      ),
    );
    for (const [index, result] of results.entries()) {
      expect(result.text, `call ${index}`).toContain('blocked');
      expect(result.text, `call ${index}`).toContain(
        index % 2 === 0 ? 'proxy=\n' : 'proxy=http://127.0.0.1:3128\n',
      );
    }
    expect(fs.existsSync(path.join(a.ws, 'intruder.txt'))).toBe(false);
    expect(fs.existsSync(path.join(b.ws, 'intruder.txt'))).toBe(false);
    expect(fs.readFileSync(path.join(a.ws, 'own.txt'), 'utf8')).toBe('mine\n');
    // Each session sees its own /tmp: the files its earlier calls made, none of the other's.
    const listA = await a.run('ls /tmp | grep -c session-');
    const listB = await b.run('ls /tmp | grep -c session-');
    expect(listA.details?.stdout).toBe('3\n');
    expect(listB.details?.stdout).toBe('3\n');
  });

  it('one Sandbox given to two sessions still gives each its own sandbox', async () => {
    const ws = makeTempDir('sandbox-host-ws-');
    const shared = createSandbox({ mode: 'required', writableRoots: [ws] });
    const a = session(shared, ws);
    const b = session(shared, ws);
    await a.run('echo a > /tmp/only-a');
    const seen = await b.run('cat /tmp/only-a 2>&1 || echo absent');
    expect(seen.text).toContain('absent');
  });

  it('aborting one call ends its process group while the others in the same sandbox finish with their own output', async () => {
    const { run } = session({ mode: 'required' });
    const tag = `5${process.pid % 1000}.${Date.now() % 1000}`;
    const controller = new AbortController();
    const others = Array.from({ length: 8 }, (_, index) =>
      run(`sleep 0.3; echo other-${index}; echo err-${index} >&2`),
    );
    const victim = run(`(sleep ${tag}; echo never) & sleep ${tag}`, controller.signal).catch(
      (error: Error) => error,
    );
    while (processesWith(`sleep ${tag}`).length < 2) await new Promise((r) => setImmediate(r));
    controller.abort();
    const aborted = await victim;
    expect(aborted).toBeInstanceOf(Error);
    expect(String(aborted)).toMatch(/aborted/);
    expect(processesWith(`sleep ${tag}`)).toEqual([]);
    const results = await Promise.all(others);
    results.forEach((result, index) => {
      expect(result.details).toMatchObject({
        exitCode: 0,
        stdout: `other-${index}\n`,
        stderr: `err-${index}\n`,
      });
    });
  });

  it('where the long-lived sandbox cannot start, each command gets a sandbox of its own', async () => {
    // A bwrap that refuses to start the helper, and only that: the per-call sandbox still works.
    const dir = makeTempDir('sandbox-host-bwrap-');
    const bwrapPath = path.join(dir, 'bwrap');
    const real = fs.realpathSync(
      (process.env.PATH ?? '')
        .split(path.delimiter)
        .map((entry) => path.join(entry, 'bwrap'))
        .find((candidate) => fs.existsSync(candidate)) ?? 'bwrap',
    );
    fs.writeFileSync(
      bwrapPath,
      `#!/bin/sh\ncase "$*" in *exec-helper.cjs*) echo "refused" >&2; exit 1;; esac\nexec ${real} "$@"\n`,
      { mode: 0o755 },
    );
    const { run } = session({ mode: 'required', bwrapPath });
    const first = await run('echo $$; touch /etc/agent-host-fallback 2>&1 || true');
    const second = await run('echo $$');
    expect(first.details?.sandboxed).toBe(true);
    expect(first.text).toContain('Read-only file system');
    // A sandbox each: each command is the first process of its own pid namespace's init.
    expect(first.details?.stdout.split('\n')[0]).toBe(second.details?.stdout.trim());
    expect(fs.existsSync('/etc/agent-host-fallback')).toBe(false);
  });

  it('500 concurrent calls: every result carries its own output', async () => {
    const { run } = session({ mode: 'required' });
    const results = await Promise.all(
      Array.from({ length: 500 }, (_, index) => run(`echo out-${index}`)),
    );
    const wrong = results.flatMap((result, index) =>
      result.text === `out-${index}\nExit code: 0` ? [] : [`${index}: ${result.text}`],
    );
    expect(wrong).toEqual([]);
  }, 300_000);

  it('a secret path made after the sandbox started is hidden from the next call (a new sandbox)', async () => {
    const home = makeTempDir('sandbox-host-home-');
    const secret = path.join(home, 'token');
    const { run } = session({ mode: 'required', secretPaths: [secret] });
    expect((await run(`cat ${secret} 2>&1 || echo none`)).text).toContain('none');
    fs.writeFileSync(secret, 'SECRET-TOKEN');
    expect((await run(`cat ${secret}; echo read`)).text).not.toContain('SECRET-TOKEN');
  });

  it('closing the session ends its sandbox and every command in it', async () => {
    const ws = makeTempDir('sandbox-host-ws-');
    const sandbox = createSandbox({ mode: 'required', writableRoots: [ws] });
    const { backgroundTasks, bash } = session(sandbox, ws);
    const tag = `6${process.pid % 1000}.${Date.now() % 1000}`;
    await bash.execute({ command: `sleep ${tag}`, run_in_background: true }, testContext());
    while (processesWith(`sleep ${tag}`).length === 0) await new Promise((r) => setImmediate(r));
    const pipeDirectory = backgroundTasks.hostFor(sandbox)?.pipeDirectory ?? '';
    expect(helperPid(pipeDirectory)).toBeDefined();
    await backgroundTasks.close();
    expect(processesWith(`sleep ${tag}`)).toEqual([]);
    expect(processesWith(pipeDirectory)).toEqual([]);
    expect(fs.existsSync(pipeDirectory)).toBe(false);
  });
});
