import { execFileSync, spawn } from 'node:child_process';
import { open, symlink, truncate, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { assertBuilt, cleanEnv, cliPath, tempDir, writeScript } from '../testing/test-support.js';
import { maxDiffFileBytes, proposedDiff, readText, unifiedDiff } from './file-diff.js';

// The transcript and the approval question show a diff of the file a write_file or edit_file
// call names: the CLI reads that file itself, on its loop, before the tool (and its checks) run.
// The path is the model's, and the workspace the repository's: a FIFO there blocked the CLI in
// open() for ever (SIGINT and SIGTERM unanswered), and a file rewritten whole kept the loop busy
// in the diff for seconds to minutes.

beforeAll(assertBuilt);
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function workspace() {
  const dir = await tempDir('agent-cli-file-diff-');
  cleanups.push(dir.dispose);
  return dir.path;
}

/** `count` lines, each different from the other call's (`tag`). */
function lines(tag: string, count: number): string {
  return Array.from({ length: count }, (_, index) => `${tag} line ${index}`).join('\n');
}

describe('the file a diff is made of', () => {
  it('is read only when it is a regular file of at most maxDiffFileBytes', async () => {
    const dir = await workspace();
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    await symlink('/dev/zero', join(dir, 'zero'));
    await symlink('loop-b', join(dir, 'loop-a'));
    await symlink('loop-a', join(dir, 'loop-b'));
    await writeFile(join(dir, 'big'), '');
    // Sparse: 2 GB on no disk space.
    await truncate(join(dir, 'big'), 2 * 1024 ** 3);
    await writeFile(join(dir, 'limit'), 'x'.repeat(maxDiffFileBytes));
    await writeFile(join(dir, 'plain.txt'), 'one\ntwo\n');
    // Each comes back at once: a blocking open of the FIFO would never return.
    for (const name of ['pipe', 'zero', 'loop-a', 'big', '.'])
      expect(readText(join(dir, name)), name).toBeUndefined();
    expect(readText(join(dir, 'limit'))).toHaveLength(maxDiffFileBytes);
    expect(readText(join(dir, 'plain.txt'))).toBe('one\ntwo\n');
    expect(readText(join(dir, 'missing.txt'))).toBe('');
    // The approval's diff of a call on each: none, rather than a hang or the device's bytes.
    for (const name of ['pipe', 'zero', 'big']) {
      expect(proposedDiff(dir, 'write_file', { path: name, content: 'x' }), name).toBe('');
      expect(
        proposedDiff(dir, 'edit_file', { path: name, old_string: '\u0000', new_string: 'x' }),
        name,
      ).toBe('');
    }
    expect(proposedDiff(dir, 'write_file', { path: 'plain.txt', content: 'one\n' })).toContain(
      '-two',
    );
  });

  it('a change too large to diff is summarised', () => {
    expect(unifiedDiff('a.txt', lines('old', 8000), lines('new', 8000))).toBe(
      '… too different to show as a diff (8000 lines before, 8000 after)',
    );
    expect(unifiedDiff('a.txt', '', `${lines('new', 3000)}\n`)).toBe(
      '… too different to show as a diff (0 lines before, 3000 after)',
    );
    // An ordinary change in a long file is still shown.
    const long = lines('same', 20000);
    expect(unifiedDiff('a.txt', long, long.replace('same line 500\n', 'other\n'))).toContain(
      '+other',
    );
  });
});

/** Runs the CLI; a run still going after `guardMs` is ended (SIGKILL) and reported as hung. */
function runGuarded(args: string[], env: Record<string, string>, guardMs: number) {
  return new Promise<{ code: number | null; stderr: string; hung: boolean }>((resolve) => {
    const child = spawn(process.execPath, [cliPath, ...args], {
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    let hung = false;
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    const guard = setTimeout(() => {
      hung = true;
      child.kill('SIGKILL');
    }, guardMs);
    child.on('close', (code) => {
      clearTimeout(guard);
      resolve({ code, stderr, hung });
    });
  });
}

describe('a hostile model and workspace against the transcript (real CLI)', () => {
  it('write_file and edit_file on a FIFO, a file rewritten whole, a file over the limit', async () => {
    const dir = await workspace();
    const ws = join(dir, 'ws');
    execFileSync('git', ['init', '-q', ws]);
    // A FIFO in the workspace: a sandboxed `mkfifo` (auto-allowed in workspace-write) leaves one.
    execFileSync('mkfifo', [join(ws, 'pipe.txt')]);
    await writeFile(join(ws, 'long.txt'), lines('old', 8000));
    const over = await open(join(ws, 'over.txt'), 'w');
    await over.write('a\n'.repeat(maxDiffFileBytes));
    await over.close();
    const script = await writeScript(dir, [
      {
        toolCalls: [
          { name: 'edit_file', arguments: { path: 'pipe.txt', old_string: 'a', new_string: 'b' } },
          { name: 'write_file', arguments: { path: 'pipe.txt', content: 'replaced' } },
        ],
      },
      {
        toolCalls: [
          { name: 'write_file', arguments: { path: 'long.txt', content: lines('new', 8000) } },
        ],
      },
      { toolCalls: [{ name: 'write_file', arguments: { path: 'over.txt', content: 'short\n' } }] },
      { text: 'Done.' },
    ]);
    const run = await runGuarded(
      ['-p', 'go', '--scripted', script, '--cwd', ws, '--mode', 'workspace-write'],
      cleanEnv({ AGENT_HOME: join(dir, 'home') }),
      60_000,
    );
    expect(run.hung, run.stderr).toBe(false);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toContain('Updated pipe.txt');
    expect(run.stderr).toContain('too different to show as a diff (8000 lines before, 8000 after)');
    // No diff of a file over the limit: not "- a" a million times.
    expect(run.stderr).not.toContain('-a\n');
  });
});
