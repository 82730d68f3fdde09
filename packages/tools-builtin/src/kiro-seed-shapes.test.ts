import * as fs from 'node:fs';
import * as path from 'node:path';
import { StaticToolExecutor, ToolError, type ToolResultMessage } from '@agent/core';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import { makeTempDir } from './test-helpers.js';

// Kiro's built-in tool names and argument shapes (crates/chat-cli tools/tool_index.json and the
// newer crates/agent tools), with the arguments of Kiro's own tests; fs_read's batch shape has its
// own file (kiro-fs-read.test.ts).
const testFileContents = '1: Hello world!\n2: This is line 2\n3: asdf\n4: Hello world!\n';
const png = fs.readFileSync(path.join(import.meta.dirname, '__fixtures__', 'tiny.png'));

const sessions: BackgroundTasks[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
});

function setup() {
  const root = makeTempDir();
  fs.writeFileSync(path.join(root, 'test_file.txt'), testFileContents);
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = new StaticToolExecutor();
  for (const tool of defaultTools({ cwd: root, backgroundTasks, bash: { sandbox: 'off' } }))
    tools.register(tool);
  const at = (name: string) => path.join(root, name);
  const read = (name: string) => fs.readFileSync(at(name), 'utf8');
  return { root, tools, at, read };
}

function text(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
}

describe('execute_bash / execute_cmd / shell {command, summary}', () => {
  it.each(['execute_bash', 'execute_cmd', 'executeBash', 'shell'])('%s', async (name) => {
    const { tools } = setup();
    const out = await tools.execute(name, {
      command: 'echo hello from kiro',
      summary: 'Print a greeting',
    });
    expect(out).toContain('hello from kiro');
  });
});

describe('fs_write {command, path, file_text?, old_str?, new_str?, insert_line?}', () => {
  it('create (file_text, or new_str as Kiro also accepts), with a summary', async () => {
    const { tools, at, read } = setup();
    await tools.execute('fs_write', {
      path: at('my-file'),
      command: 'create',
      file_text: 'Hello from create',
      summary: 'Create a file',
    });
    expect(read('my-file')).toBe('Hello from create');
    await tools.execute('fs_write', { path: at('my-file'), command: 'create', new_str: 'again' });
    expect(read('my-file')).toBe('again');
  });

  it('str_replace: a missing string fails, a present one is replaced', async () => {
    const { tools, at, read } = setup();
    const missing = await tools.executeResult('fs_write', {
      path: at('test_file.txt'),
      command: 'str_replace',
      old_str: 'asjidfopjaieopr',
      new_str: '1623749',
    });
    expect(missing.isError).toBe(true);
    // "Hello world!" occurs twice: not unique, refused.
    const twice = await tools.executeResult('fs_write', {
      path: at('test_file.txt'),
      command: 'str_replace',
      old_str: 'Hello world!',
      new_str: 'Goodbye world!',
    });
    expect(twice.isError).toBe(true);
    expect(read('test_file.txt')).toBe(testFileContents);
    await tools.execute('fs_write', {
      path: at('test_file.txt'),
      command: 'str_replace',
      old_str: '1: Hello world!',
      new_str: '1: Goodbye world!',
    });
    expect(read('test_file.txt').split('\n')[0]).toBe('1: Goodbye world!');
  });

  it('insert after line 0 and line 3; append', async () => {
    const { tools, at, read } = setup();
    await tools.execute('fs_write', {
      path: at('test_file.txt'),
      command: 'insert',
      insert_line: 0,
      new_str: '0: top',
    });
    await tools.execute('fs_write', {
      path: at('test_file.txt'),
      command: 'insert',
      insert_line: 3,
      new_str: 'new string',
    });
    await tools.execute('fs_write', {
      path: at('test_file.txt'),
      command: 'append',
      new_str: 'appended content',
    });
    expect(read('test_file.txt').split('\n')).toEqual([
      '0: top',
      '1: Hello world!',
      '2: This is line 2',
      'new string',
      '3: asdf',
      '4: Hello world!',
      'appended content',
      '',
    ]);
  });

  it('our own write_file shape still works under fs_write and Kiro’s fsWrite', async () => {
    const { tools, at, read } = setup();
    await tools.execute('fs_write', { path: at('plain.txt'), content: 'plain' });
    await tools.execute('fsWrite', { file_path: at('plain2.txt'), file_text: 'renamed' });
    expect([read('plain.txt'), read('plain2.txt')]).toEqual(['plain', 'renamed']);
  });

  it('a command call is validated as a command', async () => {
    const { tools, at } = setup();
    const error = await tools
      .execute('fs_write', { path: at('x'), command: 'str_replace' })
      .catch((thrown: unknown) => thrown);
    expect(ToolError.isInstance(error) && error.kind).toBe('invalid-args');
    expect(String(error)).toMatch(/old_str/);
  });
});

describe('Kiro’s newer read shapes', () => {
  it('fs_read {ops: [{path, offset, limit}]} (offset 0-based)', async () => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      ops: [{ path: at('test_file.txt'), offset: 1, limit: 2 }, { path: at('test_file.txt') }],
    });
    expect(result.isError).toBe(false);
    const shown = [...text(result).matchAll(/^\s*(\d+)\t/gm)].map((match) => Number(match[1]));
    expect(shown).toEqual([2, 3, 1, 2, 3, 4]);
  });

  it('image_read {paths}', async () => {
    const { tools, at } = setup();
    fs.writeFileSync(at('a.png'), png);
    fs.writeFileSync(at('b.png'), png);
    const result = await tools.executeResult('image_read', { paths: [at('a.png'), at('b.png')] });
    expect(result).toMatchObject({ toolName: 'read_file', isError: false });
    expect(result.content.filter((part) => part.type === 'image')).toHaveLength(2);
  });

  it('ls {path, depth: 0} lists the directory’s own entries', async () => {
    const { tools, root, at } = setup();
    fs.mkdirSync(at('sub/deeper'), { recursive: true });
    const out = await tools.execute('ls', { path: root, depth: 0, ignore: ['*.log'] });
    expect(out).toContain('sub/');
    expect(out).not.toContain('deeper');
  });

  it('grep {pattern, base, paths}', async () => {
    const { tools, root, at } = setup();
    fs.writeFileSync(at('notes.md'), 'Hello in markdown\n');
    const out = await tools.execute('grep', { pattern: 'Hello', base: root, paths: ['*.md'] });
    expect(out).toContain('notes.md');
    expect(out).not.toContain('test_file.txt');
  });
});
