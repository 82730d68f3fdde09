import * as fs from 'node:fs';
import * as path from 'node:path';
import {
  type ExecuteToolOptions,
  PermissionPolicy,
  StaticToolExecutor,
  type ToolResultMessage,
} from '@agent/core';
import { afterAll, describe, expect, it } from 'vitest';
import { BackgroundTasks } from './background-tasks.js';
import { defaultTools } from './default-tools.js';
import type { FsReadBatchDetails } from './fs-read-batch.js';
import { makeTempDir } from './test-helpers.js';

// Kiro's fs_read batch shape, with the arguments of Kiro's own tests (crates/chat-cli
// tools/fs_read.rs) over the same tree, built in a temp dir (Kiro's paths are absolute: here they
// are absolute under the workspace).
const testFileContents = '1: Hello world!\n2: This is line 2\n3: asdf\n4: Hello world!\n';
const lines = testFileContents.split('\n').slice(0, -1);
const png = fs.readFileSync(path.join(import.meta.dirname, '__fixtures__', 'tiny.png'));

const sessions: BackgroundTasks[] = [];
afterAll(async () => {
  await Promise.all(sessions.map((session) => session.close()));
});

function setup(options: ExecuteToolOptions = {}) {
  const root = makeTempDir();
  fs.writeFileSync(path.join(root, 'test_file.txt'), testFileContents);
  fs.mkdirSync(path.join(root, 'aaaa1/bbbb1/cccc1'), { recursive: true });
  fs.mkdirSync(path.join(root, 'aaaa2'));
  fs.writeFileSync(path.join(root, 'aaaa2/.hidden'), 'this is a hidden file');
  fs.writeFileSync(path.join(root, 'img1.png'), png);
  fs.writeFileSync(path.join(root, 'img2.png'), png);
  const backgroundTasks = new BackgroundTasks();
  sessions.push(backgroundTasks);
  const tools = new StaticToolExecutor(options);
  for (const tool of defaultTools({ cwd: root, backgroundTasks })) tools.register(tool);
  const at = (name: string) => path.join(root, name);
  return { root, tools, at };
}

/** The text of a result, images as [image]. */
function text(result: ToolResultMessage): string {
  return result.content.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
}

/** The numbered lines read_file showed, without numbers. */
function shownLines(result: ToolResultMessage): string[] {
  return [...text(result).matchAll(/^\s*\d+\t(.*)$/gm)].map((match) => match[1] ?? '');
}

describe('fs_read Line mode (Kiro: 1-based, inclusive, negative from the end)', () => {
  it.each([
    [null, null, lines],
    [1, 2, lines.slice(0, 2)],
    [1, -1, lines],
    [2, 1, lines.slice(1, 2)],
    [-2, -1, lines.slice(2)],
    [-2, null, lines.slice(2)],
    [2, null, lines.slice(1)],
  ])('start_line %j, end_line %j', async (start, end, expected) => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      operations: [{ path: at('test_file.txt'), mode: 'Line', start_line: start, end_line: end }],
    });
    expect(result).toMatchObject({ toolName: 'read_file', isError: false });
    expect(shownLines(result)).toEqual(expected);
    expect(text(result)).toMatch(/^=== 1\/1 Line .*test_file\.txt ===/);
  });

  it('Kiro’s short forms: no range, end only, start -1', async () => {
    const { tools, at } = setup();
    const only = async (operation: Record<string, unknown>) =>
      shownLines(await tools.executeResult('fs_read', { operations: [operation] }));
    expect(await only({ path: at('test_file.txt'), mode: 'Line' })).toEqual(lines);
    expect(await only({ path: at('test_file.txt'), mode: 'Line', end_line: 5 })).toEqual(lines);
    expect(await only({ path: at('test_file.txt'), mode: 'Line', start_line: -1 })).toEqual([
      lines[3],
    ]);
  });

  it('a start past the end of the file fails', async () => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      operations: [{ path: at('test_file.txt'), mode: 'Line', start_line: 100, end_line: null }],
    });
    expect(result.isError).toBe(true);
    expect(text(result)).toMatch(/failed/);
  });
});

describe('fs_read Directory, Search and Image modes', () => {
  it('Directory: depth 0 lists the entries, depth 1 one level more (never cccc1)', async () => {
    const { tools, root } = setup();
    const flat = text(
      await tools.executeResult('fs_read', { operations: [{ mode: 'Directory', path: root }] }),
    );
    expect(flat).toContain('aaaa1/');
    expect(flat).toContain('test_file.txt');
    expect(flat).not.toContain('bbbb1');
    const deeper = text(
      await tools.executeResult('fs_read', {
        operations: [{ mode: 'Directory', path: root, depth: 1 }],
      }),
    );
    expect(deeper).toContain('bbbb1/');
    expect(deeper).not.toContain('cccc1');
  });

  it('Search: case-insensitive, literal, with 2 lines of context by default', async () => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      operations: [{ mode: 'Search', path: at('test_file.txt'), pattern: 'hello' }],
    });
    expect(result.isError).toBe(false);
    const found = text(result);
    expect(found).toContain(':1:1: Hello world!');
    expect(found).toContain(':4:4: Hello world!');
    expect(found).toContain('-2-2: This is line 2');
    // A pattern is text, not a regular expression.
    const literal = await tools.executeResult('fs_read', {
      operations: [{ mode: 'Search', path: at('test_file.txt'), pattern: 'line 2.*(' }],
    });
    expect(literal.isError).toBe(false);
    expect(text(literal)).not.toContain('This is line 2');
  });

  it('Image: every path comes back as an image', async () => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      operations: [{ image_paths: [at('img1.png'), at('img2.png')], mode: 'Image' }],
    });
    expect(result.content.filter((part) => part.type === 'image')).toHaveLength(2);
    expect(text(result)).toMatch(
      /=== 1\/1 Image .*img1\.png ===[\s\S]*=== 1\/1 Image .*img2\.png ===/,
    );
  });
});

describe('fs_read batches', () => {
  it('runs Kiro’s mixed batch in order, one header per operation', async () => {
    const { tools, at } = setup();
    fs.mkdirSync(at('dir'));
    fs.writeFileSync(at('dir/a.txt'), 'a');
    fs.writeFileSync(at('log.txt'), 'ok\nwarning: disk\nok\n');
    fs.writeFileSync(at('file.txt'), 'first\n');
    fs.copyFileSync(at('img1.png'), at('photo.png'));
    const result = await tools.executeResult('fs_read', {
      operations: [
        { path: at('file.txt'), mode: 'Line' },
        { path: at('dir'), mode: 'Directory', depth: 1 },
        { path: at('log.txt'), mode: 'Search', pattern: 'warning' },
        { image_paths: [at('photo.png')], mode: 'Image' },
      ],
      purpose: 'Comprehensive file analysis',
    });
    expect(result.isError).toBe(false);
    const headers = [...text(result).matchAll(/^=== (\d)\/4 (\w+)/gm)].map(
      (m) => `${m[1]} ${m[2]}`,
    );
    expect(headers).toEqual(['1 Line', '2 Directory', '3 Search', '4 Image']);
    expect(text(result)).toContain('first');
    expect(text(result)).toContain('a.txt');
    expect(text(result)).toContain('warning: disk');
    expect(result.details).toMatchObject({
      operations: [
        { mode: 'Line', isError: false },
        { mode: 'Directory', isError: false },
        { mode: 'Search', isError: false },
        { mode: 'Image', isError: false },
      ],
    });
  });

  it('a failing operation is reported in place; the others still run', async () => {
    const { tools, at } = setup();
    const result = await tools.executeResult('fs_read', {
      operations: [
        { path: at('missing.txt'), mode: 'Line' },
        { path: at('test_file.txt'), mode: 'Line', start_line: 1, end_line: 1 },
      ],
    });
    expect(result.isError).toBe(false);
    expect(text(result)).toMatch(/=== 1\/2 Line .*missing\.txt: failed\nFile not found/);
    expect(shownLines(result)).toEqual([lines[0]]);
  });

  it.each([
    [{ operations: [] }, 'operations'],
    [{ operations: [{ mode: 'Line' }] }, 'path'],
    [{ operations: [{ mode: 'Grep', path: 'x' }] }, 'mode'],
    [{ operations: [{ mode: 'Search', path: 'x' }] }, 'pattern'],
    [{ operations: [{ mode: 'Image', image_paths: [] }] }, 'image_paths'],
  ])('refuses a malformed batch %j as invalid arguments', async (args, field) => {
    const { tools } = setup();
    const result = await tools.executeResult('fs_read', args);
    expect(result).toMatchObject({ isError: true, errorKind: 'invalid-args' });
    expect(text(result)).toContain(field);
  });

  it('the permission gate sees every path of the batch; outside the workspace is refused', async () => {
    const asked: string[][] = [];
    const { tools, at, root } = setup({
      permissionGate: (request) => {
        asked.push([...request.subjects]);
        return { behavior: 'allow' };
      },
    });
    await tools.executeResult('fs_read', {
      operations: [
        { path: at('test_file.txt'), mode: 'Line' },
        { path: root, mode: 'Directory' },
        { image_paths: [at('img1.png')], mode: 'Image' },
      ],
    });
    expect(asked).toEqual([[at('test_file.txt'), root, at('img1.png')]]);
    const outside = await tools.executeResult('fs_read', {
      operations: [
        { path: at('test_file.txt'), mode: 'Line' },
        { path: '/etc/passwd', mode: 'Line' },
      ],
    });
    expect(outside.isError).toBe(true);
    expect(text(outside)).not.toContain('root:');
  });

  it('a deny rule on one path denies the whole batch', async () => {
    const { root } = setup();
    const policy = new PermissionPolicy({
      mode: 'default',
      allow: ['read_file(*)'],
      deny: [`read_file(${path.join(root, 'aaaa2')}/**)`],
    });
    const tools = new StaticToolExecutor({ permissionGate: policy.gate });
    const backgroundTasks = new BackgroundTasks();
    sessions.push(backgroundTasks);
    for (const tool of defaultTools({ cwd: root, backgroundTasks })) tools.register(tool);
    const denied = await tools.executeResult('fs_read', {
      operations: [
        { path: path.join(root, 'test_file.txt'), mode: 'Line' },
        { path: path.join(root, 'aaaa2/.hidden'), mode: 'Line' },
      ],
    });
    expect(denied).toMatchObject({ isError: true, errorKind: 'denied' });
    expect(text(denied)).not.toContain('hidden file');
  });
});

describe('fs_read batch budget (each read is capped; the batch as a whole was not)', () => {
  it('fifty whole-file reads return at most the batch’s characters; the rest say they did not run', async () => {
    const { tools, at } = setup();
    const body = Array.from({ length: 3000 }, (_, i) => `line ${i} ${'y'.repeat(60)}`).join('\n');
    fs.writeFileSync(at('big.txt'), body);
    const result = await tools.executeResult('fs_read', {
      operations: Array.from({ length: 50 }, () => ({ mode: 'Line', path: at('big.txt') })),
    });
    const shown = text(result);
    // Before: 5,006,740 characters.
    expect(shown.length).toBeLessThan(110_000);
    expect(shown).toContain('the batch returns at most 100000 characters');
    expect(shown).toMatch(/=== \d+-50\/50: not run — the batch's output budget is spent/);
    const operations = (result.details as FsReadBatchDetails).operations;
    expect(operations).toHaveLength(50);
    expect(operations[0]).toMatchObject({ mode: 'Line', isError: false });
    expect(operations[49]).toMatchObject({ mode: 'Line', isError: true });
  });

  it('images stop at the batch’s image bytes, read_file’s maxOutputChars sets the text budget', async () => {
    const root = makeTempDir();
    const backgroundTasks = new BackgroundTasks();
    sessions.push(backgroundTasks);
    const tools = new StaticToolExecutor();
    for (const tool of defaultTools({
      cwd: root,
      backgroundTasks,
      readFile: { maxOutputChars: 5_000 },
    }))
      tools.register(tool);
    // A 1 MiB PNG (its signature, then filler): twenty per operation, fifty operations.
    const big = Buffer.concat([png, Buffer.alloc(1024 * 1024 - png.length)]);
    fs.writeFileSync(path.join(root, 'big.png'), big);
    const images = await tools.executeResult('fs_read', {
      operations: Array.from({ length: 50 }, () => ({
        mode: 'Image',
        image_paths: Array.from({ length: 20 }, () => path.join(root, 'big.png')),
      })),
    });
    const count = images.content.filter((part) => part.type === 'image').length;
    // Before: 1,000 images (1 GiB of base64).
    expect(count).toBeGreaterThan(0);
    expect(count).toBeLessThanOrEqual(10);
    expect(text(images)).toContain('not run — the batch');
    fs.writeFileSync(path.join(root, 'text.txt'), 'z'.repeat(50_000));
    const lines = await tools.executeResult('fs_read', {
      operations: Array.from({ length: 5 }, () => ({
        mode: 'Line',
        path: path.join(root, 'text.txt'),
      })),
    });
    expect(text(lines).length).toBeLessThan(6_000);
  });
});
