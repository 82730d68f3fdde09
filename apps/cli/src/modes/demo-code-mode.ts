/**
 * `agent demo --code-mode`: the scripted model answers a question about the whole project with one
 * `run_script` call that makes the ~30 tool calls itself (one of them denied by a rule, inside the
 * script too); only what the script prints and returns reaches the model.
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { type AgentEvent, toolResultText } from '@agent/core';
import type { ScriptedTurn } from '@agent/core/testing';

/** The demo's question. */
export const codeModeDemoPrompt = 'Which source files are largest, and how many TODOs are left?';

/** What the scripted model writes: TypeScript, run in QuickJS, every call through the gate. */
const demoScriptSource = `// One script instead of a call per file: sizes and TODOs of every TypeScript file.
const paths = (await tools.glob({ pattern: '**/*.ts' })).split('\\n');
const rows = await Promise.all(
  paths.map(async (path: string) => {
    const text: string = await tools.read_file({ path });
    const lines = text.split('\\n').filter((line) => /^\\s*\\d+\\t/.test(line));
    return { path, lines: lines.length, todos: lines.filter((line) => line.includes('TODO')).length };
  }),
);
try {
  await tools.bash({ command: 'rm -rf src/lib' });
} catch (error) {
  console.log(\`bash inside the script: \${error.kind} (the same rules as a direct call)\`);
}
const todos = rows.reduce((sum, row) => sum + row.todos, 0);
console.log(\`\${rows.length} files, \${todos} TODOs\`);
return rows.sort((a, b) => b.lines - a.lines).slice(0, 3).map((row) => \`\${row.path}: \${row.lines} lines\`);`;

/** The scripted model's turns in code mode. */
export const codeModeDemoScript: ScriptedTurn[] = [
  {
    thinking:
      'Reading every file one call at a time would take dozens of turns; one script can do it.',
    text: 'I will read every source file in one script and report only the totals.',
    toolCalls: [{ name: 'run_script', arguments: { script: demoScriptSource } }],
  },
  {
    text: 'The three largest files are listed above; the TODO count covers every TypeScript file. Deleting files was refused by your rules, inside the script as it would be outside it.',
  },
];

/** The extra files of the code-mode demo: 24 modules of different sizes, some with TODOs. */
export async function writeCodeModeDemoFiles(workspace: string): Promise<void> {
  await mkdir(join(workspace, 'src', 'lib'), { recursive: true });
  for (let index = 1; index <= 24; index++) {
    const name = `module-${String(index).padStart(2, '0')}`;
    const body = Array.from(
      { length: ((index * 7) % 23) + 3 },
      (_, line) => `export const value${line} = ${index * 100 + line};`,
    );
    if (index % 5 === 0) body.push(`// TODO: document ${name}`);
    await writeFile(join(workspace, 'src', 'lib', `${name}.ts`), `${body.join('\n')}\n`);
  }
}

/** Counts what a script's calls returned (never sent to the model) against what the model read. */
export class NestedCallMeter {
  #calls = 0;
  #ran = 0;
  #nestedChars = 0;
  #scriptChars = 0;

  /** Takes every event of the run. */
  onEvent(event: AgentEvent): void {
    if (event.type !== 'tool-execution-end') return;
    const chars = toolResultText(event.result.content).length;
    if (event.parentToolCallId !== undefined) {
      this.#ran++;
      this.#nestedChars += chars;
    } else if (event.toolName === 'run_script') {
      this.#scriptChars += chars;
      const calls = (event.result.details as { calls?: unknown } | undefined)?.calls;
      if (Array.isArray(calls)) this.#calls += calls.length;
    }
  }

  /** One line for the end of the demo. */
  summary(): string {
    return `code mode: one script made ${this.#calls} tool calls; the results of the ${this.#ran} that ran (${this.#nestedChars} characters) stayed out of the conversation — the model read ${this.#scriptChars}.`;
  }
}

/**
 * Transcript lines of the demo's own: the script of a `run_script` call as it starts, and its
 * whole result (what the model reads) under the transcript's one-line summary.
 */
export function scriptLines(event: AgentEvent): string[] {
  if (event.type === 'message-end' && event.message.role === 'toolResult') {
    if (event.message.toolName !== 'run_script') return [];
    return toolResultText(event.message.content)
      .split('\n')
      .map((line) => `    ┆ ${line}`);
  }
  if (event.type !== 'tool-execution-start' || event.toolName !== 'run_script') return [];
  if (event.parentToolCallId !== undefined) return [];
  const script = (event.args as { script?: unknown } | undefined)?.script;
  if (typeof script !== 'string') return [];
  return script.split('\n').map((line) => `    │ ${line}`);
}
