import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { createBashTool } from './bash.js';
import { removeStaleSpillFiles } from './output-buffer.js';
import {
  defaultSpillDir,
  SpillDirectory,
  sharedDirProblem,
  sweepAbandonedSpillDirectories,
} from './spill-dir.js';
import { makeTempDir, testContext } from './test-helpers.js';

// The spill directories live in the shared temporary directory, where another user can plant a
// link or a directory of their own before we ever run. TMPDIR points os.tmpdir() at a directory
// of the test's own.

let tmp: string;
let savedTmpdir: string | undefined;
const sessions: BackgroundTasks[] = [];

beforeEach(() => {
  tmp = makeTempDir();
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
});
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

function session(): BackgroundTasks {
  const made = new BackgroundTasks();
  sessions.push(made);
  return made;
}

async function bigOutput(backgroundTasks = session(), command = 'seq 1 2000') {
  const bash = createBashTool({
    cwd: tmp,
    sandbox: 'off',
    headBytes: 10,
    tailBytes: 10,
    backgroundTasks,
  });
  const result = await bash.execute({ command }, testContext());
  return result.details;
}

const uid = process.getuid?.() ?? 0;
const sessionPattern = (root: string) => new RegExp(`^${root}/\\d+-[0-9a-f]{16}/bash-`);

describe('a session spill directory', () => {
  it('is private to the session: 0700 inside the 0700 per-user directory, files 0600', async () => {
    expect(defaultSpillDir()).toBe(path.join(tmp, `agent-tools-builtin-${uid}`));
    const tasks = session();
    const details = await bigOutput(tasks);
    const file = details?.stdoutPath ?? '';
    expect(file).toMatch(sessionPattern(defaultSpillDir()));
    expect(path.dirname(file)).toBe(tasks.spillDirectory.path);
    expect(path.basename(tasks.spillDirectory.path)).toMatch(new RegExp(`^${process.pid}-`));
    expect(fs.statSync(defaultSpillDir()).mode & 0o777).toBe(0o700);
    expect(fs.statSync(tasks.spillDirectory.path).mode & 0o777).toBe(0o700);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(file, 'utf8').split('\n')).toHaveLength(2001);
  });

  it('two sessions get two directories; nothing is made before the first spill', async () => {
    const first = session();
    const second = session();
    expect(first.spillDirectory.path).not.toBe(second.spillDirectory.path);
    expect(fs.existsSync(first.spillDirectory.path)).toBe(false);
    await bigOutput(first);
    await bigOutput(second);
    expect(fs.readdirSync(defaultSpillDir()).sort()).toEqual(
      [first.spillDirectory.path, second.spillDirectory.path]
        .map((dir) => path.basename(dir))
        .sort(),
    );
  });

  it('seq 1 2000000 leaves nothing behind once the session closes, and later output is not saved', async () => {
    const tasks = new BackgroundTasks();
    const bash = createBashTool({
      cwd: tmp,
      sandbox: 'off',
      backgroundTasks: tasks,
      maxSpillBytes: 20_000_000,
    });
    const result = await bash.execute({ command: 'seq 1 2000000' }, testContext());
    const file = result.details?.stdoutPath ?? '';
    expect(fs.statSync(file).size).toBeGreaterThan(14_000_000);
    // A background job still writing to its own spill file when the session ends.
    await bash.execute({ command: 'yes spill', run_in_background: true }, testContext());
    const job = tasks.get('bg-1');
    await new Promise<void>((resolve) => {
      const check = () => (job?.stdout.spillPath === undefined ? setImmediate(check) : resolve());
      check();
    });
    await tasks.close();
    expect(fs.existsSync(tasks.spillDirectory.path)).toBe(false);
    expect(fs.readdirSync(defaultSpillDir())).toEqual([]);
    const after = await bash.execute({ command: 'seq 1 2000000' }, testContext());
    expect(after.details?.stdoutPath).toBeUndefined();
    expect(after.details?.stdout).toContain('the session has ended');
    expect(fs.readdirSync(defaultSpillDir())).toEqual([]);
  });

  it('a planted symbolic link as the per-user directory is refused: nothing written or deleted where it points', async () => {
    const target = path.join(tmp, 'victim');
    fs.mkdirSync(target);
    const old = path.join(target, 'bash-keep.log');
    fs.writeFileSync(old, 'not yours to delete');
    const longAgo = new Date(Date.now() - 30 * 24 * 3600 * 1000);
    fs.utimesSync(old, longAgo, longAgo);
    fs.symlinkSync(target, defaultSpillDir());

    const details = await bigOutput();
    expect(details?.stdoutPath).toBeUndefined();
    expect(details?.stdout).toContain(
      `full output could not be saved: refusing to save output there: ${defaultSpillDir()} is a symbolic link (set spillDir)`,
    );
    expect(await removeStaleSpillFiles(defaultSpillDir(), 0)).toBe(0);
    expect(await sweepAbandonedSpillDirectories()).toEqual([]);
    expect(fs.readdirSync(target)).toEqual(['bash-keep.log']);
  });

  it('a planted link or file at the session path itself is refused', async () => {
    const tasks = session();
    fs.mkdirSync(defaultSpillDir(), { mode: 0o700 });
    const target = path.join(tmp, 'victim');
    fs.mkdirSync(target);
    fs.symlinkSync(target, tasks.spillDirectory.path);
    const details = await bigOutput(tasks);
    expect(details?.stdoutPath).toBeUndefined();
    expect(details?.stdout).toContain(`${tasks.spillDirectory.path} is a symbolic link`);
    expect(fs.readdirSync(target)).toEqual([]);
    await tasks.close();
    // The link is not ours to remove, and nothing behind it was touched.
    expect(fs.lstatSync(tasks.spillDirectory.path).isSymbolicLink()).toBe(true);
  });

  it("another user's per-user directory is refused", async () => {
    if (uid !== 0) {
      // Only root can give a directory away: check against one that is another user's already.
      expect(sharedDirProblem('/')).toBe('/ belongs to another user (uid 0)');
      return;
    }
    fs.mkdirSync(defaultSpillDir(), { mode: 0o777 });
    fs.chownSync(defaultSpillDir(), 65534, 65534);
    const details = await bigOutput();
    expect(details?.stdoutPath).toBeUndefined();
    expect(details?.stdout).toContain(
      `refusing to save output there: ${defaultSpillDir()} belongs to another user (uid 65534)`,
    );
    expect(fs.readdirSync(defaultSpillDir())).toEqual([]);
  });

  it('an existing per-user directory of ours that others could read is narrowed to 0700', async () => {
    fs.mkdirSync(defaultSpillDir(), { mode: 0o755 });
    fs.chmodSync(defaultSpillDir(), 0o755);
    const details = await bigOutput();
    expect(details?.stdoutPath).toBeDefined();
    expect(fs.statSync(defaultSpillDir()).mode & 0o777).toBe(0o700);
  });

  it('a directory the caller chose is trusted as it is, and kept when the session closes', async () => {
    const chosen = path.join(tmp, 'mine');
    fs.mkdirSync(path.join(tmp, 'real'));
    fs.symlinkSync(path.join(tmp, 'real'), chosen);
    const tasks = session();
    const bash = createBashTool({
      cwd: tmp,
      sandbox: 'off',
      headBytes: 10,
      tailBytes: 10,
      spillDir: chosen,
      backgroundTasks: tasks,
    });
    const result = await bash.execute({ command: 'seq 1 2000' }, testContext());
    expect(result.details?.stdoutPath).toMatch(new RegExp(`^${chosen}/bash-`));
    await tasks.close();
    expect(fs.readdirSync(path.join(tmp, 'real')).length).toBe(1);
  });
});

describe('sandbox options of a spill directory', () => {
  it("bind the session's directory and hide the per-user one, after the default or given secrets", () => {
    const spill = new SpillDirectory();
    const options = spill.sandboxOptions();
    expect(options.readableRoots).toEqual([spill.path]);
    expect(options.secretPaths?.at(-1)).toBe(defaultSpillDir());
    expect(options.secretPaths?.length).toBeGreaterThan(5);
    expect(spill.sandboxOptions({ readableRoots: ['/x'], secretPaths: ['/s'] })).toEqual({
      readableRoots: ['/x', spill.path],
      secretPaths: ['/s', defaultSpillDir()],
    });
  });

  it("a caller's own directory is bound and nothing else changes", () => {
    const spill = new SpillDirectory({ path: path.join(tmp, 'mine') });
    expect(spill.sandboxOptions()).toEqual({ readableRoots: [path.join(tmp, 'mine')] });
    expect(spill.sandboxOptions({ secretPaths: [] })).toEqual({
      readableRoots: [path.join(tmp, 'mine')],
      secretPaths: [],
    });
  });
});

describe('sweeping directories of dead processes', () => {
  /** A pid that is not running now (the child has exited and been reaped). */
  function deadPid(): number {
    const child = spawnSync(process.execPath, ['-e', 'console.log(process.pid)'], {
      encoding: 'utf8',
    });
    return Number(child.stdout.trim());
  }

  it('removes only directories named for a dead pid, never following links', async () => {
    const root = defaultSpillDir();
    fs.mkdirSync(root, { mode: 0o700 });
    const victim = path.join(tmp, 'victim');
    fs.mkdirSync(victim);
    fs.writeFileSync(path.join(victim, 'precious'), 'keep');
    const dead = deadPid();
    const abandoned = path.join(root, `${dead}-0123456789abcdef`);
    fs.mkdirSync(abandoned);
    fs.writeFileSync(path.join(abandoned, 'bash-x-stdout-1.log'), 'old output');
    // A link inside an abandoned directory is removed as a link: what it points to stays.
    fs.symlinkSync(victim, path.join(abandoned, 'link'));
    // A link named like an abandoned directory is not a directory: left alone.
    const plantedLink = path.join(root, `${dead}-fedcba9876543210`);
    fs.symlinkSync(victim, plantedLink);
    // Live processes' directories, and names that are not ours, stay.
    const live = [`${process.pid}-0123456789abcdef`, '1-0123456789abcdef'];
    for (const name of live) fs.mkdirSync(path.join(root, name));
    const others = [`${dead}-not-hex`, `x${dead}-0123456789abcdef`, 'bash-old.log'];
    for (const name of others) fs.mkdirSync(path.join(root, name));

    expect(await sweepAbandonedSpillDirectories(root)).toEqual([abandoned]);
    expect(fs.readdirSync(root).sort()).toEqual(
      [path.basename(plantedLink), ...live, ...others].sort(),
    );
    expect(fs.readdirSync(victim)).toEqual(['precious']);
  });

  it('a process that exits without closing leaves nothing; one killed by a signal is swept by the next', () => {
    const entry = new URL('../dist/index.js', import.meta.url).href;
    const script = (ending: string) => `
      import { BackgroundTasks, createBashTool } from ${JSON.stringify(entry)};
      const bash = createBashTool({ cwd: process.cwd(), sandbox: 'off', headBytes: 10, tailBytes: 10,
        backgroundTasks: new BackgroundTasks() });
      const result = await bash.execute({ command: 'seq 1 2000' }, { toolCallId: 'c', toolName: 'bash',
        signal: new AbortController().signal, onUpdate() {}, onProgress() {} });
      console.log(result.details.stdoutPath);
      ${ending}
    `;
    const run = (ending: string) =>
      spawnSync(process.execPath, ['--input-type=module', '-e', script(ending)], {
        cwd: tmp,
        encoding: 'utf8',
        env: { ...process.env, TMPDIR: tmp },
        timeout: 30_000,
      });
    const root = defaultSpillDir();

    const exited = run('process.exit(0);');
    expect(exited.stderr).toBe('');
    expect(exited.stdout).toMatch(sessionPattern(root));
    expect(fs.readdirSync(root)).toEqual([]);

    const killed = run("process.kill(process.pid, 'SIGKILL');");
    expect(killed.signal).toBe('SIGKILL');
    const left = path.dirname(killed.stdout.trim());
    expect(fs.readdirSync(root)).toEqual([path.basename(left)]);

    // The next process's first spill sweeps the dead one's directory (in the background, before
    // its own exit removes its own).
    const next = run('');
    expect(next.stdout).toMatch(sessionPattern(root));
    expect(fs.existsSync(left)).toBe(false);
    expect(fs.readdirSync(root)).toEqual([]);
  });
});
