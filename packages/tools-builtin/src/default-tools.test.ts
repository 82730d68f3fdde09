import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, type ToolResultMessage } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { makeTempDir } from './test-helpers.js';

let dir: string | undefined;
afterEach(() => {
  if (dir !== undefined) fs.rmSync(dir, { recursive: true, force: true });
});

describe('defaultTools', () => {
  it('makes the seed tools plus glob with the policies they deserve', () => {
    dir = makeTempDir();
    const tools = defaultTools({ cwd: dir });
    expect(tools.map((tool) => tool.name)).toEqual([
      'bash',
      'bash_output',
      'read_file',
      'write_file',
      'edit_file',
      'list_files',
      'glob',
      'search',
      'todo_write',
      'sleep',
      'send_user_message',
      'notebook_edit',
    ]);
    const byName = Object.fromEntries(tools.map((tool) => [tool.name, tool]));
    for (const name of [
      'read_file',
      'list_files',
      'glob',
      'search',
      'todo_write',
      'sleep',
      'send_user_message',
    ])
      expect(byName[name]?.policy?.permission).toBe('read-only');
    for (const name of ['write_file', 'edit_file', 'notebook_edit']) {
      expect(byName[name]?.policy?.permission).toBe('workspace-write');
      expect(typeof byName[name]?.policy?.resourceKey).toBe('function');
    }
    expect(byName.bash?.policy?.permission).toBe('full-access');
    expect(typeof byName.todo_write?.policy?.resourceKey).toBe('function');
    // web_fetch moved to @agent/tools-web: no HTML converter in the file tools' package.
    expect(byName.web_fetch).toBeUndefined();
    expect(tools.every((tool) => tool.source === 'builtin')).toBe(true);
    expect(tools.every((tool) => tool.parameters.type === 'object')).toBe(true);
  });

  it('works end to end in an agent run with a permission gate that sees the subjects', async () => {
    dir = makeTempDir();
    const backgroundTasks = new BackgroundTasks();
    const tools = defaultTools({
      cwd: dir,
      backgroundTasks,
      bash: { spillDir: path.join(dir, '.spill') },
    });
    const seen: string[][] = [];
    const provider = createScriptedProvider([
      {
        toolCalls: [{ name: 'write_file', arguments: { path: 'notes.md', content: 'hello\n' } }],
      },
      {
        toolCalls: [
          { name: 'bash', arguments: { command: 'cat notes.md && rm notes.md' } },
          { name: 'read_file', arguments: { path: '../escape.txt' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'scripted',
      tools,
      permissionGate: (request) => {
        seen.push([request.toolName, ...request.subjects]);
        return request.subjects.some((subject) => subject.startsWith('rm '))
          ? { behavior: 'deny', reason: 'rm is not allowed' }
          : { behavior: 'allow' };
      },
    });
    const outcome = await agent.run('go').result;
    await backgroundTasks.killAll();
    const results = outcome.messages.filter((m): m is ToolResultMessage => m.role === 'toolResult');
    expect(seen[0]).toEqual(['write_file', path.join(dir, 'notes.md')]);
    expect(seen[1]).toEqual(['bash', 'cat notes.md', 'rm notes.md']);
    expect(results.map((r) => r.isError)).toEqual([false, true, true]);
    expect(fs.readFileSync(path.join(dir, 'notes.md'), 'utf8')).toBe('hello\n');
  });
});
