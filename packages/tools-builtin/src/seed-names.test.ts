import * as fs from 'node:fs';
import * as path from 'node:path';
import { Agent, ToolRegistry } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { describe, expect, it } from 'vitest';
import { defaultTools } from './default-tools.js';
import { seedArguments, seedToolNames } from './seed-names.js';
import { makeTempDir } from './test-helpers.js';

describe('seed names: other agents’ tool and argument names', () => {
  it('resolve to our tools, with their argument names mapped', async () => {
    const cwd = makeTempDir();
    fs.writeFileSync(path.join(cwd, 'notes.txt'), 'alpha\nbeta needle\n');
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'fs_read', arguments: { file_path: 'notes.txt' } },
          { name: 'Read', arguments: { filePath: 'notes.txt', offset: 2 } },
          { name: 'grep_search', arguments: { query: 'needle' } },
          { name: 'glob_search', arguments: { glob: '*.txt' } },
          { name: 'list_directory', arguments: { directory: '.' } },
        ],
      },
      {
        toolCalls: [
          { name: 'fs_write', arguments: { file_path: 'out.txt', file_text: 'written\n' } },
        ],
      },
      {
        toolCalls: [
          {
            name: 'Edit',
            arguments: { file_path: 'out.txt', old_str: 'written', new_str: 'edited' },
          },
        ],
      },
      { toolCalls: [{ name: 'execute_bash', arguments: { cmd: 'cat out.txt' } }] },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: defaultTools({ cwd, bash: { sandbox: 'off' } }),
    });
    const result = await agent.run('go').result;
    expect(result.stopReason).toBe('completed');
    const results = agent.messages.filter((message) => message.role === 'toolResult');
    expect(results.map((message) => [message.toolName, message.isError])).toEqual([
      ['read_file', false],
      ['read_file', false],
      ['search', false],
      ['glob', false],
      ['list_files', false],
      ['write_file', false],
      ['edit_file', false],
      ['bash', false],
    ]);
    const text = (index: number) => JSON.stringify(results[index]?.content);
    expect(text(0)).toContain('beta needle');
    expect(text(1)).not.toContain('alpha');
    expect(text(2)).toContain('notes.txt');
    expect(text(7)).toContain('edited');
    expect(fs.readFileSync(path.join(cwd, 'out.txt'), 'utf8')).toBe('edited\n');
  });

  it('our own argument names always win, and every alias is unique across the tools', () => {
    const prepare = seedArguments('read_file');
    expect(prepare({ path: 'a', file_path: 'b' })).toEqual({ path: 'a', file_path: 'b' });
    expect(prepare({ file_path: 'b', filePath: 'c' })).toEqual({ path: 'b', filePath: 'c' });
    expect(() => new ToolRegistry(defaultTools({ cwd: makeTempDir() }))).not.toThrow();
    const all = Object.values(seedToolNames).flat();
    expect(new Set(all).size).toBe(all.length);
  });

  it("Claude Code's Grep arguments: glob filters files, -i ignores case, -n is a no-op, type maps", async () => {
    const cwd = makeTempDir();
    fs.writeFileSync(path.join(cwd, 'a.ts'), 'Needle in ts\n');
    fs.writeFileSync(path.join(cwd, 'b.md'), 'needle in md\n');
    const provider = createScriptedProvider([
      {
        toolCalls: [
          { name: 'Grep', arguments: { pattern: 'needle', glob: '*.md', '-n': true } },
          {
            name: 'Grep',
            arguments: { pattern: 'needle', '-i': true, output_mode: 'files_with_matches' },
          },
          { name: 'Grep', arguments: { pattern: 'Needle', type: 'ts' } },
          { name: 'Grep', arguments: { pattern: 'needle', type: 'cobol' } },
          // A name every object inherits is no file type either.
          { name: 'Grep', arguments: { pattern: 'needle', type: 'constructor' } },
        ],
      },
      { text: 'done' },
    ]);
    const agent = new Agent({
      provider,
      model: 'm',
      tools: defaultTools({ cwd, bash: { sandbox: 'off' } }),
    });
    await agent.run('go').result;
    const results = agent.messages.filter((message) => message.role === 'toolResult');
    const text = (index: number) => JSON.stringify(results[index]?.content);
    expect(text(0)).toContain('b.md');
    expect(text(0)).not.toContain('a.ts');
    expect(text(1)).toContain('a.ts');
    expect(text(1)).toContain('b.md');
    // ripgrep's common types map to a glob.
    expect(results[2]?.isError).toBe(false);
    expect(text(2)).toContain('a.ts');
    expect(text(2)).not.toContain('b.md');
    // A type (or any argument) nothing maps is refused, naming what the tool takes (not a search
    // of everything).
    expect(results[3]?.isError).toBe(true);
    expect(text(3)).toContain('unknown field \\"type\\"');
    expect(text(3)).toContain('known fields: pattern, path, include');
    expect(results[4]?.isError).toBe(true);
    expect(text(4)).toContain('unknown field \\"type\\"');
  });
});
