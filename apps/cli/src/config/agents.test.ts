import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AnyAgentTool, StaticToolExecutor } from '@agent/core';
import { createScriptedProvider } from '@agent/core/testing';
import { afterEach, describe, expect, it } from 'vitest';
import { tempDir } from '../testing/test-support.js';
import { createAgentTools, loadAgentDefinitions, parseAgentFile } from './agents.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

describe('agent files', () => {
  it('reads the front matter with YAML (lists or comma-separated tools) and the body as the prompt', async () => {
    const agent = await parseAgentFile(
      'a.md',
      '---\nname: reviewer\ndescription: >\n  Reviews diffs\n  for bugs.\ntools: [read_file, search]\nmodel: inherit\ncolor: red\n---\n\nBe thorough.\n',
    );
    expect(agent).toMatchObject({
      name: 'reviewer',
      description: 'Reviews diffs for bugs.',
      tools: ['read_file', 'search'],
      model: undefined,
      prompt: 'Be thorough.',
    });
    const listed = await parseAgentFile(
      'b.md',
      '---\nname: b\ndescription: d\ntools: Read, Grep\nmodel: claude-haiku-4-5\n---\n',
    );
    expect(listed.tools).toEqual(['Read', 'Grep']);
    expect(listed.model).toBe('claude-haiku-4-5');
  });

  it('refuses files without front matter, unknown keys, bad names and bad YAML, naming the file', async () => {
    await expect(parseAgentFile('x.md', 'just text')).rejects.toThrow(
      /x\.md: an agent file starts with front matter/,
    );
    await expect(
      parseAgentFile('x.md', '---\nname: a\ndescription: d\ntool: bash\n---\n'),
    ).rejects.toThrow(/x\.md: unknown key "tool"/);
    await expect(parseAgentFile('x.md', '---\nname: a b\ndescription: d\n---\n')).rejects.toThrow(
      /"name"/,
    );
    await expect(parseAgentFile('x.md', '---\nname: [a\n---\n')).rejects.toThrow(/not valid YAML/);
    await expect(parseAgentFile('x.md', '---\nname: a\n---\n')).rejects.toThrow(/"description"/);
  });

  it('the project’s agents win over the user’s by name', async () => {
    const dir = await tempDir('agent-cli-agents-');
    cleanups.push(dir.dispose);
    const home = join(dir.path, 'home');
    const workspace = join(dir.path, 'ws');
    await mkdir(join(home, 'agents'), { recursive: true });
    await mkdir(join(workspace, '.agent', 'agents'), { recursive: true });
    await writeFile(join(home, 'agents', 'r.md'), '---\nname: r\ndescription: user r\n---\n');
    await writeFile(join(home, 'agents', 'u.md'), '---\nname: u\ndescription: user u\n---\n');
    await writeFile(
      join(workspace, '.agent', 'agents', 'r.md'),
      '---\nname: r\ndescription: project r\n---\n',
    );
    const agents = await loadAgentDefinitions(workspace, { home });
    expect(agents.map((a) => `${a.name}: ${a.description}`)).toEqual(['r: project r', 'u: user u']);
  });
});

describe('a sub-agent’s tools', () => {
  const stub = (name: string): AnyAgentTool => ({
    name,
    description: name,
    parameters: { type: 'object' },
    execute: async () => ({ content: [{ type: 'text', text: `${name} ran` }] }),
  });

  it.each([
    [['use_aws', 'read_file'], ['read_file'], true],
    [['aws', 'Read'], ['read_file'], true],
    [['bash', 'use_aws'], ['bash', 'use_aws'], false],
  ])('%j: use_aws only beside bash (it runs as a bash call)', async (listed, offered, said) => {
    const provider = createScriptedProvider([{ text: 'done' }]);
    const log: string[] = [];
    const [tool] = await createAgentTools(
      [
        {
          name: 'helper',
          description: 'd',
          tools: listed,
          model: undefined,
          prompt: '',
          path: 'helper.md',
        },
      ],
      {
        available: [
          stub('bash'),
          { ...stub('use_aws'), aliases: ['aws'] },
          { ...stub('read_file'), aliases: ['Read'] },
        ],
        provider,
        model: 'scripted',
        providerFor: async () => provider,
        log: (line) => log.push(line),
      },
    );
    if (tool === undefined) throw new Error('no agent tool');
    await new StaticToolExecutor().register(tool).execute('helper', { task: 'go' });
    expect(provider.requests[0]?.tools?.map((definition) => definition.name)).toEqual(offered);
    expect(log.some((line) => line.includes('helper.md: use_aws left out'))).toBe(said);
  });
});
