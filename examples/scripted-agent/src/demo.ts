import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type AgentEvent, type AgentRunResult, type Message } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { defaultTools } from '@agent/tools-builtin';

/** The scripted model's turns: it explores, edits, runs a command, recovers from errors, and reports. */
export const demoScript: ScriptedTurn[] = [
  {
    thinking: 'I should look at the project before changing anything.',
    text: 'Let me look around the workspace.',
    toolCalls: [
      { name: 'list_files', arguments: {} },
      { name: 'read_file', arguments: { path: 'README.md' } },
    ],
  },
  {
    text: 'Searching for open work.',
    toolCalls: [
      { name: 'search', arguments: { pattern: 'TODO', output_mode: 'content' } },
      { name: 'glob', arguments: { pattern: '**/*.ts' } },
    ],
  },
  {
    text: 'Fixing the TODO.',
    toolCalls: [
      {
        name: 'edit_file',
        arguments: {
          path: 'src/greet.ts',
          old_string: "return 'hi'; // TODO: greet properly",
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the model writes TypeScript source containing a template literal
          new_string: 'return `Hello, ${name}!`;',
        },
      },
    ],
  },
  {
    text: 'Checking the change and trying a file outside the workspace (this must be refused).',
    toolCalls: [
      {
        name: 'bash',
        arguments: { command: 'grep -n "Hello" src/greet.ts && echo "check passed"' },
      },
      { name: 'read_file', arguments: { path: '../../../../etc/passwd' } },
      { name: 'read_file', arguments: '{"path": "README.md", "offset": ' },
    ],
  },
  {
    text: 'Writing notes.',
    toolCalls: [
      {
        name: 'write_file',
        arguments: { path: 'NOTES.md', content: '# Notes\n\n- greet() now says hello.\n' },
      },
    ],
  },
  { text: 'Done: greet() now greets properly, the check passed, and NOTES.md records the change.' },
];

/** Options of {@link runDemo}. */
export interface DemoOptions {
  /** Where to print; defaults to stdout. */
  write?: (line: string) => void;
}

/** Runs the offline demo in a fresh temp workspace and removes it afterwards. */
export async function runDemo(
  options: DemoOptions = {},
): Promise<{ result: AgentRunResult; messages: readonly Message[]; notes: string }> {
  const write = options.write ?? ((line: string) => process.stdout.write(`${line}\n`));
  const workspace = await mkdtemp(join(tmpdir(), 'agent-demo-'));
  try {
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'README.md'), '# greeter\n\nA tiny project for the demo.\n');
    await writeFile(
      join(workspace, 'src', 'greet.ts'),
      "export function greet(name: string): string {\n  return 'hi'; // TODO: greet properly\n}\n",
    );
    await writeFile(join(workspace, 'src', 'index.ts'), "export { greet } from './greet.js';\n");

    const agent = new Agent({
      provider: createScriptedProvider(demoScript),
      model: 'scripted-demo',
      systemPrompt: 'You are a careful coding agent.',
      tools: defaultTools({ cwd: workspace }),
    });
    write(`workspace: ${workspace}`);
    const run = agent.run('Fix the TODO in this project and leave a note.');
    for await (const event of run) printEvent(event, write);
    const result = await run.result;
    const notes = await readFile(join(workspace, 'NOTES.md'), 'utf8').catch(() => '');
    write(`\nstop reason: ${result.stopReason} after ${result.turns} turns`);
    return { result, messages: agent.messages, notes };
  } finally {
    await rm(workspace, { recursive: true, force: true });
  }
}

function printEvent(event: AgentEvent, write: (line: string) => void): void {
  switch (event.type) {
    case 'turn-start':
      write(`\n── turn ${event.turn}`);
      return;
    case 'message-end':
      if (event.message.role === 'assistant') {
        for (const block of event.message.content) {
          if (block.type === 'thinking') write(`  (thinking) ${block.thinking}`);
          if (block.type === 'text') write(`  assistant: ${block.text}`);
          if (block.type === 'toolCall') write(`  → ${block.name} ${block.arguments}`);
        }
      } else if (event.message.role === 'toolResult') {
        const text = event.message.content
          .map((block) => (block.type === 'text' ? block.text : `[${block.mimeType}]`))
          .join(' ');
        const lines = text.split('\n');
        const shown = lines.slice(0, 4).join('\n      ');
        write(
          `  ${event.message.isError ? '✗' : '✓'} ${event.message.toolName}: ${shown}${lines.length > 4 ? ` … (${lines.length} lines)` : ''}`,
        );
      }
      return;
    default:
      return;
  }
}
