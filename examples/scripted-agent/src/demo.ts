import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Agent,
  type AgentRunResult,
  defineTool,
  type Message,
  PermissionPolicy,
} from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { defaultTools } from '@agent/tools-builtin';
import * as z from 'zod';

/**
 * The library in one file: a tool of your own (`defineTool` + zod), two built-in tools confined
 * to a workspace, a permission policy, and a scripted model in place of a real provider. The
 * reference CLI's `agent demo` shows a longer session; this is the code you would write.
 */
const wordCount = defineTool({
  name: 'word_count',
  description: 'Counts the words of a text.',
  input: z.object({ text: z.string().describe('the text to count') }),
  policy: { permission: 'read-only' },
  execute: async ({ text }) => `${text.split(/\s+/).filter(Boolean).length} words`,
});

/** The scripted model: reads a file, counts its words (once with a bad argument), writes a summary. */
export const exampleScript: ScriptedTurn[] = [
  {
    text: 'Reading the draft.',
    toolCalls: [{ name: 'read_file', arguments: { path: 'draft.txt' } }],
  },
  {
    text: 'Counting its words.',
    toolCalls: [
      { name: 'word_count', arguments: { text: 'The quick brown fox jumps over the lazy dog' } },
      { name: 'word_count', arguments: { text: 42 } },
    ],
  },
  {
    text: 'Writing the summary.',
    toolCalls: [{ name: 'write_file', arguments: { path: 'summary.md', content: '9 words.\n' } }],
  },
  { text: 'The draft has 9 words; summary.md says so.' },
];

/** Runs the example in a fresh temp workspace (removed afterwards); prints one line per event of interest. */
export async function runExample(
  write: (line: string) => void = (line) => process.stdout.write(`${line}\n`),
): Promise<{ result: AgentRunResult; messages: readonly Message[]; summary: string }> {
  const workspace = await mkdtemp(join(tmpdir(), 'agent-example-'));
  try {
    await writeFile(join(workspace, 'draft.txt'), 'The quick brown fox jumps over the lazy dog\n');
    const agent = new Agent({
      provider: createScriptedProvider(exampleScript),
      model: 'scripted',
      tools: [wordCount, ...defaultTools({ cwd: workspace, tools: ['read_file', 'write_file'] })],
      // Reads run unasked; writes only where a rule allows them.
      permissionGate: new PermissionPolicy({ mode: 'read-only', allow: ['write_file(*.md)'] }).gate,
    });
    const run = agent.run('How long is draft.txt? Leave a summary.');
    for await (const event of run) {
      if (event.type === 'tool-execution-start') write(`→ ${event.toolName}`);
      if (event.type === 'message-end' && event.message.role === 'toolResult') {
        const text = event.message.content.map((part) => (part.type === 'text' ? part.text : ''));
        write(`  ${event.message.isError ? '✗' : '✓'} ${text.join(' ').split('\n')[0]}`);
      }
    }
    const result = await run.result;
    write(`stop reason: ${result.stopReason}`);
    const summary = await readFile(join(workspace, 'summary.md'), 'utf8').catch(() => '');
    return { result, messages: agent.messages, summary };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}
