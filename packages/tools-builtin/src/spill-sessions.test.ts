import * as fs from 'node:fs';
import * as path from 'node:path';
import { type AnyAgentTool, executeTool, type ToolResultMessage } from '@agent/core';
import { skipWithout } from '@agent/tooling-system-tools';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { defaultSpillDir } from './spill-dir.js';
import { makeTempDir } from './test-helpers.js';

// Two sessions of one user, side by side, each with the default tools in the OS sandbox: a
// session reads its own spill files (bash at the path the notice gives, and read_file), and
// nothing of another session's — by path, by listing, by search, from bash. The file tools'
// roots hold the whole temporary directory, so the refusal is the spill rule's, not confinement's.

beforeEach(skipWithout('bwrap'));

let tmp: string;
let savedTmpdir: string | undefined;
const sessions: BackgroundTasks[] = [];

beforeEach(() => {
  tmp = makeTempDir('spill-sessions-');
  savedTmpdir = process.env.TMPDIR;
  process.env.TMPDIR = tmp;
});
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.close();
  if (savedTmpdir === undefined) delete process.env.TMPDIR;
  else process.env.TMPDIR = savedTmpdir;
});

interface Session {
  tasks: BackgroundTasks;
  call(name: string, args: Record<string, unknown>): Promise<ToolResultMessage>;
}

function session(roots: readonly string[]): Session {
  const tasks = new BackgroundTasks();
  sessions.push(tasks);
  const ws = path.join(tmp, 'ws');
  fs.mkdirSync(ws, { recursive: true });
  const tools = defaultTools({
    cwd: ws,
    roots,
    backgroundTasks: tasks,
    bash: { sandbox: { mode: 'required', secretPaths: [] } },
  });
  const byName = new Map<string, AnyAgentTool>(tools.map((tool) => [tool.name, tool]));
  return {
    tasks,
    call: (name, args) => {
      const tool = byName.get(name);
      if (tool === undefined) throw new Error(`no tool ${name}`);
      return executeTool(tool, args);
    },
  };
}

const text = (message: ToolResultMessage) =>
  message.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');

/** The path the truncation notice gives. */
function noticePath(message: ToolResultMessage): string {
  const found = /full output saved to (\S+) \.\.\.\]/.exec(text(message));
  if (found?.[1] === undefined)
    throw new Error(`no spill notice in: ${text(message).slice(0, 300)}`);
  return found[1];
}

describe.each([
  ['the workspace', () => [path.join(tmp, 'ws')]],
  ['the whole temporary directory', () => [tmp]],
])('spill files of sessions whose file tools may read %s', (_name, roots) => {
  it('a session reads its own at the notice path, from bash in the sandbox and with read_file', async () => {
    const first = session(roots());
    const spilled = await first.call('bash', { command: 'seq 1 2000000' });
    const file = noticePath(spilled);
    // The notice names the hidden per-user directory: that is no sign of a blocked command.
    expect(text(spilled)).not.toContain('Blocked by the sandbox');
    expect(path.dirname(file)).toBe(first.tasks.spillDirectory.path);
    const tail = await first.call('bash', { command: `tail -n 5 ${file}` });
    expect(tail.details).toMatchObject({ sandboxed: true, exitCode: 0 });
    expect(text(tail)).toContain('1999996\n1999997\n1999998\n1999999\n2000000');
    // Read-only: the sandbox binds it read-only.
    const write = await first.call('bash', { command: `echo x >> ${file}` });
    expect((write.details as { exitCode: number }).exitCode).not.toBe(0);
    const read = await first.call('read_file', { path: file, offset: 1999999, limit: 2 });
    expect(read.isError).toBeFalsy();
    expect(text(read)).toContain('1999999');
    expect(text(read)).toContain('2000000');
  });

  it('another session cannot read, list, search or glob it, nor reach it from bash', async () => {
    const first = session(roots());
    const second = session(roots());
    const file = noticePath(await first.call('bash', { command: 'seq 1 2000000' }));
    // The second session has spill files of its own, so its directory exists beside the first's.
    noticePath(await second.call('bash', { command: 'seq 1 100000' }));
    const firstDir = first.tasks.spillDirectory.path;

    for (const target of [file, firstDir, path.join(firstDir, '..', path.basename(firstDir))]) {
      const read = await second.call('read_file', { path: target });
      expect(read.isError).toBe(true);
      expect(text(read)).toMatch(/Permission denied/);
    }
    for (const [name, args] of [
      ['search', { pattern: '^1999999$', path: firstDir }],
      ['list_files', { path: firstDir }],
      ['glob', { pattern: '*.log', path: firstDir }],
    ] as const) {
      const refused = await second.call(name, args);
      expect(refused.isError, name).toBe(true);
      expect(text(refused)).toMatch(/Permission denied/);
    }
    // Walking a directory that holds them (where the roots allow it) never shows them.
    const walkFrom = roots()[0] ?? tmp;
    const search = await second.call('search', {
      pattern: '^1999999$',
      path: walkFrom,
      output_mode: 'files_with_matches',
    });
    expect(text(search)).not.toContain(path.basename(firstDir));
    expect(text(search)).not.toContain('bash-');
    const glob = await second.call('glob', { pattern: '**/*.log', path: walkFrom });
    expect(text(glob)).not.toContain('bash-');
    const list = await second.call('list_files', { path: walkFrom, depth: 5 });
    expect(text(list)).not.toContain(path.basename(firstDir));
    expect(text(list)).not.toContain('bash-');

    // bash: the first session's directory is not in the second's sandbox at all.
    for (const command of [`tail -n 5 ${file}`, `cat ${file}`, `ls ${firstDir}`]) {
      const result = await second.call('bash', { command });
      expect(result.details, command).toMatchObject({ sandboxed: true });
      expect((result.details as { exitCode: number }).exitCode, command).not.toBe(0);
      expect(text(result), command).toContain('No such file or directory');
      expect(text(result), command).not.toMatch(/^1999996$/m);
    }
    const listed = await second.call('bash', { command: `ls -A ${defaultSpillDir()}` });
    expect(text(listed).split('\n')[0]).toBe(path.basename(second.tasks.spillDirectory.path));
    const found = await second.call('bash', { command: `find ${tmp} -name 'bash-*' -type f` });
    const paths = text(found)
      .split('\n')
      .filter((line) => line.startsWith('/'));
    expect(paths.length).toBeGreaterThan(0);
    for (const entry of paths)
      expect(entry.startsWith(second.tasks.spillDirectory.path)).toBe(true);
    // Its own directory is there.
    const own = await second.call('bash', { command: `ls ${second.tasks.spillDirectory.path}` });
    expect(text(own)).toMatch(/bash-.*-stdout-/);
  });
});
