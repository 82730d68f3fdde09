import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { createConfigTools } from './config-tools.js';
import { defineTool } from './define-tool.js';
import { createIntrospectTool } from './introspect-tool.js';
import { StaticToolExecutor } from './static-tool-executor.js';
import type { AnyAgentTool } from './tool.js';

// Kiro's `introspect {query?, doc_path?}`: questions about the agent itself, answered from what
// the host configured.
function setup() {
  const readFile = defineTool({
    name: 'read_file',
    aliases: ['fs_read'],
    description: 'Reads a file from the workspace.\nMore lines.',
    input: z.object({ path: z.string() }),
    policy: { permission: 'read-only' },
    execute: async () => '',
  });
  const bash = Object.assign(
    defineTool({
      name: 'bash',
      description: 'Runs a shell command.',
      input: z.object({ command: z.string() }),
      execute: async () => '',
    }),
    { keywords: ['terminal'] },
  );
  let verbose = false;
  const settings = {
    verbose: {
      description: 'Verbose output.',
      get: () => verbose,
      set: (value: unknown) => {
        verbose = value === true;
        return undefined;
      },
    },
  };
  const tools: AnyAgentTool[] = [readFile, bash, ...createConfigTools({ settings })];
  const introspect = createIntrospectTool({
    tools: () => tools,
    settings,
    docs: {
      'features/tangent-mode.md': '# Tangent mode\n\nExplore a side question, then return.',
      'features/hooks.md': '# Hooks\n\nRun a command before each tool call.',
    },
    about: 'Test agent 1.0.',
  });
  tools.push(introspect);
  const executor = new StaticToolExecutor();
  for (const tool of tools) executor.register(tool);
  return {
    executor,
    setVerbose: (value: boolean) => {
      verbose = value;
    },
  };
}

describe('introspect', () => {
  it('with no arguments: about, every tool with its other names and tier, settings, docs', async () => {
    const { executor } = setup();
    const out = await executor.execute('introspect', {});
    expect(out).toContain('Test agent 1.0.');
    expect(out).toContain(
      '- read_file (also fs_read) [read-only]: Reads a file from the workspace.',
    );
    expect(out).not.toContain('More lines.');
    expect(out).toContain('- bash [full-access]: Runs a shell command.');
    expect(out).toContain('- verbose = false [changeable]: Verbose output.');
    expect(out).toContain(
      'Docs (read one with doc_path): features/tangent-mode.md, features/hooks.md',
    );
  });

  it('a query narrows to what matches, settings read at the call', async () => {
    const { executor, setVerbose } = setup();
    const out = await executor.execute('introspect', { query: 'Can you use the terminal?' });
    expect(out).toContain('Tools (1 of 5):\n- bash');
    expect(out).not.toContain('read_file');
    setVerbose(true);
    expect(await executor.execute('introspect', { query: 'verbose' })).toContain(
      '- verbose = true',
    );
    expect(await executor.execute('introspect', { query: 'How do hooks work?' })).toContain(
      'Docs (read one with doc_path): features/hooks.md',
    );
  });

  it('says when nothing about the query is documented, and lists everything', async () => {
    const { executor } = setup();
    const result = await executor.executeResult('introspect', { query: 'quantum teleportation' });
    expect(result.content[0]).toMatchObject({ type: 'text' });
    const out = result.content[0]?.type === 'text' ? result.content[0].text : '';
    expect(out).toContain('Nothing about "quantum teleportation" is documented here');
    expect(out).toContain('- bash');
    expect(result.details).toMatchObject({ matched: false });
  });

  it('doc_path returns one doc whole (Kiro’s example path); an unknown one names the docs', async () => {
    const { executor } = setup();
    expect(await executor.execute('introspect', { doc_path: 'features/tangent-mode.md' })).toBe(
      '# Tangent mode\n\nExplore a side question, then return.',
    );
    await expect(executor.execute('introspect', { doc_path: 'features/nope.md' })).rejects.toThrow(
      'there is no doc "features/nope.md"; the docs are: features/tangent-mode.md, features/hooks.md',
    );
  });
});
