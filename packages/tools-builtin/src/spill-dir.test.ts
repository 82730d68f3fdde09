import * as fs from 'node:fs';
import * as path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createBashTool } from './bash.js';
import { removeStaleSpillFiles } from './output-buffer.js';
import { defaultSpillDir, sharedDirProblem } from './spill-dir.js';
import { makeTempDir, testContext } from './test-helpers.js';

// The default spill directory lives in the shared temporary directory, where another user can
// plant a link or a directory of their own before we ever run. TMPDIR points os.tmpdir() at a
// directory of the test's own.

let tmp: string;
let savedTmpdir: string | undefined;

beforeEach(() => {
  tmp = makeTempDir();
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
});
afterEach(() => {
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

async function bigOutput() {
  const bash = createBashTool({ cwd: tmp, sandbox: 'off', headBytes: 10, tailBytes: 10 });
  const result = await bash.execute({ command: 'seq 1 2000' }, testContext());
  return result.details;
}

const uid = process.getuid?.() ?? 0;

describe('the default spill directory', () => {
  it('is one per user, made 0700, with files 0600', async () => {
    expect(defaultSpillDir()).toBe(path.join(tmp, `agent-tools-builtin-${uid}`));
    const details = await bigOutput();
    expect(details?.stdoutPath).toMatch(new RegExp(`^${tmp}/agent-tools-builtin-${uid}/bash-`));
    expect(fs.statSync(defaultSpillDir()).mode & 0o777).toBe(0o700);
    expect(fs.statSync(details?.stdoutPath ?? '').mode & 0o777).toBe(0o600);
    expect(fs.readFileSync(details?.stdoutPath ?? '', 'utf8').split('\n')).toHaveLength(2001);
  });

  it('an existing one of ours that others could read is narrowed to 0700', async () => {
    fs.mkdirSync(defaultSpillDir(), { mode: 0o755 });
    fs.chmodSync(defaultSpillDir(), 0o755);
    const details = await bigOutput();
    expect(details?.stdoutPath).toBeDefined();
    expect(fs.statSync(defaultSpillDir()).mode & 0o777).toBe(0o700);
  });

  it('a planted symbolic link is refused: nothing is written or deleted where it points', async () => {
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
    expect(fs.readdirSync(target)).toEqual(['bash-keep.log']);
  });

  it("another user's directory is refused", async () => {
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

  it('a directory the caller chose is trusted as it is', async () => {
    const chosen = path.join(tmp, 'mine');
    fs.mkdirSync(path.join(tmp, 'real'));
    fs.symlinkSync(path.join(tmp, 'real'), chosen);
    const bash = createBashTool({
      cwd: tmp,
      sandbox: 'off',
      headBytes: 10,
      tailBytes: 10,
      spillDir: chosen,
    });
    const result = await bash.execute({ command: 'seq 1 2000' }, testContext());
    expect(result.details?.stdoutPath).toMatch(new RegExp(`^${chosen}/bash-`));
    expect(fs.readdirSync(path.join(tmp, 'real')).length).toBeGreaterThan(0);
  });
});
