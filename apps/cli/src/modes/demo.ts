import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type AgentRunResult, PermissionPolicy } from '@agent/core';
import { createScriptedProvider, type ScriptedTurn } from '@agent/core/testing';
import { createSandbox } from '@agent/sandbox';
import { BackgroundTasks, defaultTools } from '@agent/tools-builtin';
import { invokedAs } from '../config/invoked-as.js';
import { Transcript } from '../ui/transcript.js';
import {
  codeModeDemoPrompt,
  codeModeDemoScript,
  NestedCallMeter,
  scriptLines,
  writeCodeModeDemoFiles,
} from './demo-code-mode.js';

/** Where the demo's model tries to write outside the workspace (a command the rules allow). */
const outsideMarker = '__OUTSIDE__';

/**
 * The scripted model's turns: it explores, edits, runs commands (one denied by a rule, one
 * blocked by the OS sandbox), recovers from errors, and reports.
 */
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
    text: 'Checking the change, tidying up, and peeking outside the workspace (both must be refused).',
    toolCalls: [
      {
        name: 'bash',
        arguments: { command: 'grep -n "Hello" src/greet.ts && echo "check passed"' },
      },
      { name: 'bash', arguments: { command: 'rm -rf src/index.ts' } },
      { name: 'read_file', arguments: { path: '../../../../etc/passwd' } },
      { name: 'read_file', arguments: '{"path": "README.md", "offset": ' },
    ],
  },
  {
    text: 'Leaving a marker outside the workspace with a command the rules allow (the sandbox must stop it).',
    toolCalls: [{ name: 'bash', arguments: { command: `touch ${outsideMarker}/escaped.txt` } }],
  },
  {
    text: 'The notebook prints the old greeting too; fixing its first cell.',
    toolCalls: [
      { name: 'read_file', arguments: { path: 'try.ipynb' } },
      {
        name: 'notebook_edit',
        arguments: {
          path: 'try.ipynb',
          edit_mode: 'replace',
          cell_index: 0,
          new_source: "print('Hello, world!')",
        },
      },
      {
        name: 'send_user_message',
        arguments: { message: 'greet() is fixed; writing notes next.' },
      },
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

/** A one-cell Jupyter notebook (nbformat 4.5) with an output, for read_file and notebook_edit. */
const demoNotebook = `${JSON.stringify(
  {
    cells: [
      {
        cell_type: 'code',
        execution_count: 1,
        id: 'greet',
        metadata: {},
        outputs: [{ name: 'stdout', output_type: 'stream', text: ['hi\n'] }],
        source: ["print('hi')"],
      },
    ],
    metadata: { kernelspec: { display_name: 'Python 3', language: 'python', name: 'python3' } },
    nbformat: 4,
    nbformat_minor: 5,
  },
  null,
  1,
)}\n`;

/** The demo's permission rules: the workspace is writable, two bash commands are allowed, `rm` is denied. */
export const demoRules = {
  mode: 'workspace-write',
  allow: ['bash(grep *)', 'bash(echo *)', 'bash(touch *)'],
  deny: ['bash(rm *)'],
} as const;

/**
 * Runs the offline demo in a fresh temp workspace, printing the transcript, and removes the
 * workspace. `codeMode`: the model answers with one script instead (see demo-code-mode.ts).
 */
export async function runDemo(
  write: (text: string) => void,
  options: { codeMode?: boolean } = {},
): Promise<AgentRunResult> {
  const codeMode = options.codeMode === true;
  const workspace = await mkdtemp(join(tmpdir(), 'agent-demo-'));
  // Outside the workspace and outside /tmp (which is private inside the sandbox).
  const outside = await mkdtemp(
    join(existsSync('/var/tmp') ? '/var/tmp' : tmpdir(), 'agent-demo-outside-'),
  );
  // Ctrl-C (or a closed terminal, SIGTERM) stops the run and lets the clean-up below remove the
  // temp folders: ending the process at once, as the CLI does where nothing is running, left
  // /tmp/agent-demo-* behind on every interrupted demo.
  const interrupted = new AbortController();
  const stop = () => interrupted.abort(new Error('interrupted'));
  const signals = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;
  for (const signal of signals) process.on(signal, stop);
  const backgroundTasks = new BackgroundTasks();
  const transcript = new Transcript({ write });
  const sandbox = createSandbox({
    mode: 'auto',
    writableRoots: [workspace],
    onWarning: () => undefined,
  });
  const script = (codeMode ? codeModeDemoScript : demoScript).map((turn) => ({
    ...turn,
    ...(turn.toolCalls === undefined
      ? {}
      : {
          toolCalls: turn.toolCalls.map((call) =>
            typeof call.arguments === 'object' && typeof call.arguments.command === 'string'
              ? {
                  ...call,
                  arguments: { command: call.arguments.command.replace(outsideMarker, outside) },
                }
              : call,
          ),
        }),
  }));
  try {
    await mkdir(join(workspace, 'src'));
    await writeFile(join(workspace, 'README.md'), '# greeter\n\nA tiny project for the demo.\n');
    await writeFile(
      join(workspace, 'src', 'greet.ts'),
      "export function greet(name: string): string {\n  return 'hi'; // TODO: greet properly\n}\n",
    );
    await writeFile(join(workspace, 'src', 'index.ts'), "export { greet } from './greet.js';\n");
    await writeFile(join(workspace, 'try.ipynb'), demoNotebook);
    if (codeMode) await writeCodeModeDemoFiles(workspace);

    const policy = new PermissionPolicy({
      mode: demoRules.mode,
      allow: demoRules.allow,
      deny: demoRules.deny,
    });
    const builtin = defaultTools({ cwd: workspace, backgroundTasks, bash: { sandbox } });
    const meter = new NestedCallMeter();
    const tools = codeMode
      ? [...builtin, (await import('@agent/code-mode')).createCodeModeTool({ tools: builtin })]
      : builtin;
    const agent = new Agent({
      // Small chunks and a short delay so the text visibly streams.
      provider: createScriptedProvider(script, { chunkSize: 6, delayMs: 4 }),
      model: 'scripted-demo',
      systemPrompt: 'You are a careful coding agent.',
      tools,
      permissionGate: policy.gate,
      onEvent: (event) => {
        transcript.onEvent(event);
        for (const line of scriptLines(event)) transcript.line(line);
        meter.onEvent(event);
      },
    });
    transcript.line('agent demo — a scripted model (no network, no API key) drives the real tools');
    transcript.line(`workspace: ${workspace} (removed afterwards)`);
    transcript.line(
      `permissions: mode ${demoRules.mode}, allow ${demoRules.allow.join(' ')}, deny ${demoRules.deny.join(' ')}`,
    );
    transcript.line(`bash: ${sandbox.describe()}`);
    const prompt = codeMode ? codeModeDemoPrompt : 'Fix the TODO in this project and leave a note.';
    transcript.line(`\n> ${prompt}\n`);
    const result = await agent.run(prompt, { signal: interrupted.signal }).result;
    if (result.stopReason === 'aborted') {
      transcript.line('\n(interrupted: the demo stopped and its temporary workspace is removed)');
      return result;
    }
    if (codeMode) {
      transcript.line(`\nstop reason: ${result.stopReason} after ${result.turns} turns`);
      transcript.line(meter.summary());
      transcript.line(nextStep(' (with --code-mode for this)'));
      return result;
    }
    const notes = await readFile(join(workspace, 'NOTES.md'), 'utf8').catch(() => '');
    const escaped = existsSync(join(outside, 'escaped.txt'));
    transcript.line(
      `\nstop reason: ${result.stopReason} after ${result.turns} turns; NOTES.md ${notes === '' ? 'missing' : 'written'}; ` +
        `outside the workspace: ${escaped ? 'escaped.txt was written (no sandbox here)' : 'nothing written (the sandbox blocked it)'}`,
    );
    transcript.line(nextStep(''));
    return result;
  } finally {
    for (const signal of signals) process.off(signal, stop);
    await backgroundTasks.close();
    await sandbox.close();
    await rm(workspace, { recursive: true, force: true });
    await rm(outside, { recursive: true, force: true });
  }
}

/** The demo's last line: how to go on with a real model, as this CLI can be run here. */
function nextStep(suffix: string): string {
  const agent = invokedAs();
  return `Next, with a real model${suffix}: export ANTHROPIC_API_KEY=… (or OPENAI_API_KEY, GEMINI_API_KEY), then \`${agent}\` for a session or \`${agent} -p "…"\` for one run; \`${agent} --help\` lists the options.`;
}
