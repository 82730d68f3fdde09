import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { bubblewrapProblem } from '@agent/sandbox';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { sweepAbandonedFifoDirectories } from './output-pipe.js';
import { makeTempDir, resultText, testContext } from './test-helpers.js';

let dir: string | undefined;
let background: BackgroundTasks | undefined;

afterEach(async () => {
  await background?.killAll();
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function tool(extra: { headBytes?: number; tailBytes?: number } = {}) {
  dir = makeTempDir();
  background = new BackgroundTasks();
  return createBashTool({
    cwd: dir,
    sandbox: 'off',
    spillDir: path.join(dir, '.spill'),
    backgroundTasks: background,
    ...extra,
  });
}

/** What `seq from to` prints. */
function seq(from: number, to: number): string {
  let text = '';
  for (let n = from; n <= to; n++) text += `${n}\n`;
  return text;
}

/** What a module `script` run in a new Node process (in `cwd`, with `TMPDIR`) printed as JSON; it must print nothing on stderr. */
function printedBy(script: string, cwd: string, tmpdir: string): unknown {
  const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, TMPDIR: tmpdir },
    timeout: 60_000,
  });
  expect(child.stderr).toBe('');
  return JSON.parse(child.stdout);
}

function openFds(): number {
  return fs.readdirSync('/proc/self/fd').length;
}

describe('bash output through real pipes', () => {
  it('gives the command FIFOs for stdout and stderr, not sockets', async () => {
    const bash = tool();
    const result = await bash.execute(
      {
        command:
          '[ -p /dev/stdout ] && echo out-fifo; [ -p /dev/stderr ] && echo err-fifo >&2; [ -S /dev/stdout ] && echo socket',
      },
      testContext(),
    );
    expect(result.details?.stdout).toBe('out-fifo\n');
    expect(result.details?.stderr).toBe('err-fifo\n');
  });

  it('keeps both streams exact when they are large and written at once (spill files byte for byte)', async () => {
    const bash = tool({ headBytes: 1000, tailBytes: 1000 });
    const result = await bash.execute(
      { command: 'seq 1 400000 & seq 500000 700000 >&2 & wait' },
      testContext(),
    );
    const stdout = seq(1, 400000);
    const stderr = seq(500000, 700000);
    expect(result.details?.stdoutBytes).toBe(stdout.length);
    expect(result.details?.stderrBytes).toBe(stderr.length);
    expect(fs.readFileSync(result.details?.stdoutPath ?? '', 'latin1')).toBe(stdout);
    expect(fs.readFileSync(result.details?.stderrPath ?? '', 'latin1')).toBe(stderr);
    const text = resultText(result);
    expect(text.startsWith(stdout.slice(0, 900))).toBe(true);
    expect(text).toContain(stderr.slice(-900));
  });

  it('never mixes the output of concurrent calls (one read buffer serves every pipe)', async () => {
    const bash = tool({ headBytes: 200_000, tailBytes: 200_000 });
    const results = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        bash.execute(
          { command: `seq ${i * 100000} ${i * 100000 + 30000}; seq 1 ${i + 1} >&2` },
          testContext(),
        ),
      ),
    );
    results.forEach((result, i) => {
      // How the call ended, should its output be short (a local CI run at load ~20 once saw
      // stdout end at 64 KiB: the first pipe's worth).
      const { stdout, stderr, ...ending } = result.details ?? {};
      const how = JSON.stringify({ ...ending, stdoutLength: stdout?.length, stderr });
      expect(stdout, how).toBe(seq(i * 100000, i * 100000 + 30000));
      expect(stderr, how).toBe(seq(1, i + 1));
    });
  });

  it('leaves no file descriptor open after its calls', async () => {
    const bash = tool();
    await bash.execute({ command: 'echo warm' }, testContext());
    const before = openFds();
    for (let i = 0; i < 40; i++) {
      const result = await bash.execute({ command: `echo ${i}; echo e${i} >&2` }, testContext());
      expect(result.details?.stdout).toBe(`${i}\n`);
    }
    // A descendant holding the pipes past the drain window: its ends are closed by force.
    await bash.execute({ command: '(sleep 3 &) ; echo held' }, testContext());
    expect(openFds()).toBeLessThanOrEqual(before);
  });

  // mkfifo is the system's, never PATH's (workspace-programs.test.ts): a temporary folder that
  // cannot be made is what leaves no FIFO here.
  it("falls back to Node's pipes where FIFOs cannot be made (no folder for them)", async () => {
    dir = makeTempDir();
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { createBashTool } from ${JSON.stringify(entry)};
      const bash = createBashTool({ cwd: process.cwd(), sandbox: 'off', headBytes: 100, tailBytes: 100,
        spillDir: process.cwd() + '/spill' });
      const context = { toolCallId: 'c', toolName: 'bash', signal: new AbortController().signal,
        onUpdate() {}, onProgress() {} };
      const result = await bash.execute({ command: "[ -S /dev/stdout ] && echo socket; i=0; while [ $i -lt 3000 ]; do echo line$i; i=$((i+1)); done; echo err >&2" }, context);
      const fs = await import('node:fs');
      const saved = fs.readFileSync(result.details.stdoutPath, 'utf8');
      console.log(JSON.stringify({ first: saved.split('\\n')[0], lines: saved.split('\\n').length, stderr: result.details.stderr }));
    `;
    expect(printedBy(script, dir, path.join(dir, 'no-such-dir'))).toEqual({
      first: 'socket',
      lines: 3002,
      stderr: 'err\n',
    });
  });

  // A workspace that holds the temporary directory (`cd /tmp && agent`): the FIFOs made ahead for
  // later commands lie inside a writable root of every sandbox of the process.
  it.runIf(bubblewrapProblem() === undefined)(
    'a sandboxed background command cannot write into a later command’s output through the FIFO directory',
    () => {
      dir = makeTempDir();
      fs.mkdirSync(path.join(dir, 'tmp'));
      const entry = new URL('../dist/index.js', import.meta.url).href;
      const forger = [
        `for d in ${dir}/tmp/agent-bash-fifo-*; do`,
        '  for n in $(ls "$d" 2>/dev/null) $(seq -f "p%g" 0 400); do',
        '    if [ -p "$d/$n" ]; then (exec 3>"$d/$n" && while echo FORGED >&3; do sleep 0.1; done) 2>/dev/null & fi',
        '  done',
        'done',
        'touch forger-ready; wait',
      ].join('\n');
      const script = `
        import { createBashTool, BackgroundTasks } from ${JSON.stringify(entry)};
        const backgroundTasks = new BackgroundTasks();
        const bash = createBashTool({ cwd: process.cwd(), sandbox: { mode: 'required', writableRoots: [process.cwd()] },
          reuseSandbox: false, backgroundTasks, spillDir: process.cwd() + '/spill', killGraceMs: 100 });
        const context = () => ({ toolCallId: 'c', toolName: 'bash', signal: new AbortController().signal,
          onUpdate() {}, onProgress() {} });
        const text = (result) => result.content.map((part) => part.text).join('\\n');
        await bash.execute({ command: 'true' }, context());
        await bash.execute({ command: ${JSON.stringify(forger)}, run_in_background: true }, context());
        const outputs = [text(await bash.execute({ command: 'while [ ! -e forger-ready ]; do sleep 0.05; done; echo real 0' }, context()))];
        for (const n of [1, 2, 3]) outputs.push(text(await bash.execute({ command: 'echo real ' + n }, context())));
        await backgroundTasks.killAll();
        console.log(JSON.stringify(outputs));
        process.exit(0);
      `;
      expect(printedBy(script, dir, path.join(dir, 'tmp'))).toEqual(
        [0, 1, 2, 3].map((n) => `real ${n}\nExit code: 0`),
      );
    },
  );

  it('a process killed by a signal leaves its FIFO directory, named for its pid; a later sweep removes it and nothing else', async () => {
    dir = makeTempDir();
    const tmp = path.join(dir, 'tmp');
    fs.mkdirSync(tmp);
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const script = `
      import { createBashTool } from ${JSON.stringify(entry)};
      const bash = createBashTool({ cwd: process.cwd(), sandbox: 'off', spillDir: process.cwd() + '/spill' });
      const context = { toolCallId: 'c', toolName: 'bash', signal: new AbortController().signal,
        onUpdate() {}, onProgress() {} };
      const result = await bash.execute({ command: 'echo ready' }, context);
      process.stdout.write(result.details.stdout);
      setInterval(() => {}, 1000);
    `;
    const child = spawn(process.execPath, ['--input-type=module', '-e', script], {
      cwd: dir,
      env: { ...process.env, TMPDIR: tmp },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('ready')) resolve();
      });
      child.once('exit', () => reject(new Error('the child ended before its call')));
    });
    const gone = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await gone;
    const left = fs.readdirSync(tmp);
    expect(left).toEqual([expect.stringMatching(new RegExp(`^agent-bash-fifo-${child.pid}-`))]);
    expect(fs.readdirSync(path.join(tmp, left[0] ?? '')).length).toBeGreaterThan(0);

    // Beside it: a live process's directory, and a dead one's holding something not ours.
    const live = path.join(tmp, `agent-bash-fifo-${process.pid}-live`);
    fs.mkdirSync(live);
    spawnSync('mkfifo', [path.join(live, 'p0')]);
    const foreign = path.join(tmp, `agent-bash-fifo-${child.pid}-foreign`);
    fs.mkdirSync(foreign);
    spawnSync('mkfifo', [path.join(foreign, 'p0')]);
    fs.writeFileSync(path.join(foreign, 'notes.txt'), 'keep me');

    const removed = await sweepAbandonedFifoDirectories(tmp);
    expect(removed).toEqual([path.join(tmp, left[0] ?? '')]);
    expect(fs.readdirSync(tmp).sort()).toEqual(
      [path.basename(foreign), path.basename(live)].sort(),
    );
    expect(fs.readdirSync(foreign)).toEqual(['notes.txt']);
    expect(fs.readdirSync(live)).toEqual(['p0']);
  });
});
