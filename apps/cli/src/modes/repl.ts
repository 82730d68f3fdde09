import { errorMessage, type PermissionMode, terminalSafe, type UserMessage } from '@agent/core';
import { expandLeadingTilde } from '../config/home-path.js';
import { projectRootNotice, wideWorkspaceNotice } from '../config/project-root.js';
import { closestWord, peerMode, peerSlashCommand } from '../config/suggest.js';
import { runPrompt, type Session } from '../session/session.js';
import { newSessionPath } from '../session/sessions.js';
import { withheldNotice } from '../session/tool-sources.js';
import { contextLine } from '../ui/compaction-lines.js';
import { canRedraw } from '../ui/output.js';
import type { RunKeys } from '../ui/terminal-keys.js';
import { Transcript } from '../ui/transcript.js';
import { compactCommand } from './compact-command.js';
import type { PromptInput, PromptOutcome } from './prompt-input.js';
import { resumedLines } from './resumed-lines.js';
import { rewindCommand } from './rewind-command.js';
import { toolOutputText } from './tool-output.js';

const modes: readonly PermissionMode[] = [
  'default',
  'read-only',
  'workspace-write',
  'full-access',
  'plan',
];

/** Options of {@link runRepl}. */
export interface ReplOptions {
  session: Session;
  keys: RunKeys;
  /** The terminal's input: the prompt's lines, and the key reader's bytes during a run. */
  prompt: PromptInput;
  output: NodeJS.WriteStream;
  /** Where to save after every run (`--save`). */
  savePath: string | undefined;
  /** Run first, as if typed at the prompt (`agent "prompt"`). */
  initialPrompt?: string | undefined;
}

const help = `Commands: /exit  /mode <default|read-only|workspace-write|full-access|plan>  /save <file>  /model [name]  /compact [focus]  /rewind [n [what] [force]]  /output [n]  /clear  /tools  /agents  /mcp  /cost  /permissions  /help
MCP servers' prompts: /<server>:<prompt> [name=value …] (listed by /mcp).
While a run goes: type and press Enter to steer it, Alt+Enter to queue a follow-up; Ctrl-C stops it.
Ctrl-C twice at the prompt (or Ctrl-D) exits. Each session is saved as it goes: agent --continue resumes the newest of this folder, agent --resume lists them.`;

/**
 * The first line of a description, to fit `width` characters: cut at a word boundary (never
 * inside a word) with `…` when it is longer.
 */
export function clipAtWord(text: string, width: number): string {
  const line = (text.split('\n')[0] ?? '').trim();
  if (line.length <= width) return line;
  const room = Math.max(width - 1, 1);
  const cut = line.slice(0, room + 1).lastIndexOf(' ');
  // One word longer than the room: cut it (nothing else fits).
  const head = cut > 0 ? line.slice(0, cut) : line.slice(0, room);
  return `${head.replace(/[\s,;:.(—–-]+$/u, '')}…`;
}

/** `name=value` pairs (values may be quoted) into a prompt's arguments. */
export function promptArguments(text: string): Record<string, string> {
  const args: Record<string, string> = {};
  for (const match of text.matchAll(/([A-Za-z0-9_-]+)=("([^"]*)"|'([^']*)'|(\S+))/g)) {
    args[match[1] as string] = match[3] ?? match[4] ?? match[5] ?? '';
  }
  return args;
}

/** The text of a filled-in MCP prompt, as one user message (text parts; others named). */
function promptText(
  messages: { role: string; content: { type: string; text?: string } }[],
): string {
  return messages
    .map((message) =>
      message.content.type === 'text'
        ? (message.content.text ?? '')
        : `[${message.content.type} from the prompt]`,
    )
    .join('\n\n');
}

/**
 * The interactive loop. Readline owns the terminal only while a prompt is read; during a run the
 * key reader does (raw mode), so Ctrl-C aborts the run and approvals take one keypress.
 */
export async function runRepl(options: ReplOptions): Promise<number> {
  const { session, keys, prompt, output } = options;
  const write = (text: string) => output.write(text);
  const colour = output.isTTY === true && (process.env.NO_COLOR ?? '') === '';
  // Markdown in answers on a terminal with colours; the renderer loads while the prompt waits.
  let markdown: ((text: string) => string) | undefined;
  const markdownLoaded = colour
    ? import('../ui/markdown.js').then(
        ({ createMarkdownRenderer }) => {
          markdown = createMarkdownRenderer(output.columns ?? 80);
        },
        () => undefined,
      )
    : Promise.resolve();
  const transcript = new Transcript({
    write,
    cwd: session.cwd,
    colour,
    markdown: () => markdown,
    ...(canRedraw(output)
      ? { spinner: { paused: () => keys.waiting, columns: () => output.columns } }
      : {}),
    questionOpen: () => keys.waiting,
  });
  // The banner and the commands' answers name folders, files, rules, agents, servers and their
  // tools and prompts — text a repository, a model or a server chose: each line is shown, never
  // obeyed (an escape sequence, a newline). Notices (a hook's output) keep their lines.
  const shownLine = (text: string) => transcript.line(terminalSafe(text, { singleLine: true }));
  const noticeLine = (text: string) => transcript.line(terminalSafe(text));
  shownLine(`agent — ${session.model.label}; mode ${session.policy.mode}`);
  // The total is what the model is offered; each source says how many of them it gave.
  shownLine(`tools (${session.tools.tools.length}): ${session.tools.sources.join(', ')}`);
  shownLine(`bash: ${session.tools.sandbox.describe()}`);
  const withheld = withheldNotice(session.tools.withheld);
  if (withheld !== undefined) shownLine(withheld);
  if (session.hooksSandbox !== undefined) shownLine(`hooks: ${session.hooksSandbox}`);
  const project = projectRootNotice(session);
  if (project !== undefined) shownLine(project);
  const wide = wideWorkspaceNotice(session.cwd);
  if (wide !== undefined) shownLine(wide);
  if (session.agent.messages.length > 0)
    for (const line of resumedLines(session.agent.messages, clipAtWord)) shownLine(line);
  transcript.line(help);
  let interrupted = false;
  // Prompts that run before the next line is read: the one given on the command line, an MCP
  // prompt filled in, and what was typed during a run that the run did not send.
  const waiting: string[] = options.initialPrompt === undefined ? [] : [options.initialPrompt];
  // From here every key is kept: lines typed while the session starts or a run goes are queued.
  prompt.start();
  // Where the conversation is written after each run; /clear moves on to a new session file.
  let savePath = options.savePath;
  // Runs of this session a crash cut off (--continue) go on before the first prompt.
  for (const runId of [...session.runsToResume]) {
    try {
      await runPrompt(session, { resume: runId }, transcript, {
        onStart: (abort) => keys.start(abort),
        onNotice: noticeLine,
      });
    } finally {
      keys.stop();
    }
    if (savePath !== undefined)
      await session.save(savePath).catch((error: unknown) => {
        shownLine(`error: ${errorMessage(error)}`);
      });
  }
  while (true) {
    const next = waiting.shift();
    const outcome: PromptOutcome =
      next === undefined ? await prompt.next() : { type: 'line', text: next, typedAhead: true };
    // A line that was not typed at a prompt on the screen is shown as it runs.
    if (outcome.type === 'line' && outcome.typedAhead) write(`> ${outcome.text}\n`);
    if (outcome.type === 'eof') break;
    if (outcome.type === 'interrupt') {
      if (interrupted) break;
      interrupted = true;
      shownLine('(press Ctrl-C again or Ctrl-D to exit)');
      continue;
    }
    interrupted = false;
    const text = outcome.text.trim();
    if (text === '') continue;
    if (text.startsWith('/')) {
      const [command = '', ...rest] = text.split(/\s+/);
      const argument = rest.join(' ');
      if (command === '/exit' || command === '/quit') break;
      // `/clear the tests` cleared the conversation and `/tools bash` listed every tool: a word
      // after a command that reads none was dropped without a sign.
      if (argument !== '' && commandsWithoutArguments.has(command)) {
        shownLine(`usage: ${command} (it takes no arguments; "${argument}" was not used)`);
        continue;
      }
      if (command === '/help') transcript.line(help);
      else if (command === '/mode') {
        if (modes.includes(argument as PermissionMode)) {
          session.policy.setMode(argument as PermissionMode);
          shownLine(`mode: ${argument}`);
        } else {
          const peer = peerMode(argument);
          shownLine(
            `mode is ${session.policy.mode}; choose one of ${modes.join(', ')}${peer === undefined ? '' : ` (for ${argument}, use ${peer})`}`,
          );
        }
      } else if (command === '/save') {
        if (argument === '') shownLine('usage: /save <file>');
        else {
          // `~/notes.json` as the shell would read it (--save does the same): it was a folder
          // named "~" that "does not exist".
          const path = expandLeadingTilde(argument);
          try {
            await session.save(path);
            shownLine(`saved ${session.agent.messages.length} messages to ${path}`);
          } catch (error) {
            shownLine(`error: ${errorMessage(error)}`);
          }
        }
      } else if (command === '/cost') {
        const { usage, model } = session;
        const cost =
          usage.cost === undefined ? 'cost unknown for this model' : `$${usage.cost.toFixed(4)}`;
        shownLine(
          `${usage.runs} run${usage.runs === 1 ? '' : 's'} with ${model.label}: ${usage.input} input tokens (${usage.cacheRead} from cache), ${usage.output} output tokens; ${cost}`,
        );
        shownLine(contextLine(session.agent.contextUsage()));
      } else if (command === '/rewind') {
        const text = await rewindCommand({
          session,
          argument,
          line: shownLine,
          save: async () => {
            if (savePath !== undefined) await session.save(savePath);
          },
        });
        // The prompt gone from the conversation comes back to the input line, to edit and send.
        if (text !== undefined) prompt.insert(text);
      } else if (command === '/compact') {
        const outcome = await compactCommand({ session, focus: argument, transcript, keys });
        if (outcome?.type === 'compacted' && savePath !== undefined)
          await session.save(savePath).catch((error: unknown) => {
            shownLine(`error: ${errorMessage(error)}`);
          });
      } else if (command === '/permissions') {
        const { rules, policy } = session;
        shownLine(`mode: ${policy.mode}`);
        for (const kind of ['allow', 'ask', 'deny'] as const)
          shownLine(`${kind}: ${rules[kind].length === 0 ? '(none)' : rules[kind].join('  ')}`);
        const grants = policy.grants;
        shownLine(
          `granted this session: ${grants.length === 0 ? '(none)' : grants.map((grant) => `${grant.decision} ${grant.tool}${grant.subject === undefined ? '' : `(${grant.subject})`}`).join('  ')}`,
        );
      } else if (command === '/tools') {
        // Each on one line of the terminal, cut between words.
        const columns = Math.max(output.columns ?? 100, 60);
        for (const tool of session.agent.tools.list())
          shownLine(
            `${tool.name} — ${clipAtWord(tool.description, columns - tool.name.length - 4)}`,
          );
        const deferred = session.agent.deferredTools;
        if (deferred.pending.length > 0)
          shownLine(
            `(${deferred.pending.length} more behind tool_search; ${deferred.loaded.length} loaded)`,
          );
      } else if (command === '/model') {
        if (argument === '') shownLine(`model: ${session.model.model} (${session.model.label})`);
        else {
          try {
            session.replaceAgent({ model: await session.chooseModel(argument) });
            shownLine(`model: ${session.model.model} (the conversation goes on)`);
          } catch (error) {
            shownLine(`error: ${errorMessage(error)}`);
          }
        }
      } else if (command === '/clear') {
        session.replaceAgent({ messages: [] });
        // No earlier prompt to go back to: the checkpoints go with the conversation.
        await session.checkpoints.clear();
        // A new session file: the conversation saved so far stays where it is (--resume finds it).
        try {
          savePath = await newSessionPath(session.cwd, session.id);
          shownLine(
            `conversation cleared (tools, mode, rules and grants stay); new session file ${savePath}`,
          );
        } catch {
          savePath = undefined;
          shownLine(
            'conversation cleared (tools, mode, rules and grants stay); this session is not saved',
          );
        }
      } else if (command === '/output') {
        // Lines kept (a result's own lines), control characters made visible.
        transcript.line(terminalSafe(toolOutputText(session.agent.messages, argument)));
      } else if (command === '/agents') {
        if (session.agents.length === 0)
          shownLine('no sub-agents (Markdown files in .agent/agents/ or ~/.agent/agents/)');
        for (const agent of session.agents)
          shownLine(
            `${agent.name} — ${clipAtWord(agent.description, 100)} (tools: ${agent.tools?.join(', ') ?? 'all'}; model: ${agent.model ?? 'same'}; ${agent.path})`,
          );
      } else if (command === '/mcp') {
        if (session.tools.mcp.length === 0) shownLine('no MCP servers (--mcp-config)');
        for (const server of session.tools.mcp) {
          shownLine(`${server.name}: ${server.status}, ${server.tools().length} tools`);
          if (server.serverCapabilities?.prompts === undefined) continue;
          try {
            for (const prompt of (await server.listPrompts()).prompts) {
              const names = (prompt.arguments ?? []).map((arg) => `${arg.name}=…`).join(' ');
              shownLine(`  /${server.name}:${prompt.name} ${names}`.trimEnd());
            }
          } catch (error) {
            shownLine(`  prompts: ${errorMessage(error)}`);
          }
        }
      } else if (command.includes(':')) {
        // /<server>:<prompt> args — the server's prompt, filled in, sent as the next message.
        const [serverName = '', promptName = ''] = command.slice(1).split(':');
        const server = session.tools.mcp.find((candidate) => candidate.name === serverName);
        if (server === undefined) shownLine(`no MCP server "${serverName}"; /mcp lists them`);
        else {
          try {
            const filled = await server.getPrompt(promptName, promptArguments(argument));
            waiting.unshift(promptText(filled.messages as never));
          } catch (error) {
            shownLine(`error: ${errorMessage(error)}`);
          }
        }
      } else shownLine(unknownCommandLine(command));
      continue;
    }

    write('\n');
    await markdownLoaded;
    try {
      await runPrompt(session, text, transcript, {
        onStart: (abort) =>
          keys.start(abort, (line, kind) => {
            // Enter: steer (delivered between tool batches; calls not yet started are skipped).
            // Alt+Enter: a follow-up, sent when the run would otherwise end.
            // A command of the REPL is not a message for the model: it runs after the run
            // (`/compact` typed while a tool ran went to the model as the text "/compact").
            if (isReplCommand(line)) {
              waiting.push(line.trim());
              transcript.lineNow(
                terminalSafe(`  ⏎ after this run: ${line.trim()}`, { singleLine: true }),
              );
            } else if (kind === 'steer') {
              session.agent.steer(line);
              transcript.lineNow(terminalSafe(`  ↳ steering: ${line}`, { singleLine: true }));
            } else {
              session.agent.followUp(line);
              transcript.lineNow(terminalSafe(`  ⏎ queued: ${line}`, { singleLine: true }));
            }
          }),
        onNotice: noticeLine,
        savePath,
      });
    } finally {
      keys.stop();
    }
    // Lines typed as the run was ending, which it did not send: each runs next, in order.
    waiting.unshift(...session.agent.takeQueuedMessages().map(userText));
    // A line typed during the run without Enter is not lost: the next prompt starts with it.
    prompt.insert(keys.takeLine());
    if (savePath !== undefined) {
      try {
        await session.save(savePath);
      } catch (error) {
        shownLine(`error: ${errorMessage(error)}`);
      }
    }
    write('\n');
  }
  return 0;
}

/** The text of a queued user message (typed in the REPL: a string, or text parts). */
function userText(message: UserMessage): string {
  const { content } = message;
  if (typeof content === 'string') return content;
  return content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
}

/** The slash commands that read no argument. */
const commandsWithoutArguments: ReadonlySet<string> = new Set([
  '/cost',
  '/permissions',
  '/tools',
  '/clear',
  '/agents',
  '/mcp',
]);

/** The slash commands, for "did you mean" (MCP prompts, /<server>:<prompt>, are listed by /mcp). */
const slashCommands = [
  'exit',
  'quit',
  'help',
  'mode',
  'save',
  'cost',
  'rewind',
  'compact',
  'permissions',
  'tools',
  'model',
  'clear',
  'agents',
  'mcp',
  'output',
];

/**
 * Whether a line typed during a run is one of the REPL's commands (`/compact …`, `/exit`, an MCP
 * prompt `/server:prompt …`) rather than text that happens to start with a slash (a path).
 */
function isReplCommand(line: string): boolean {
  const word = line.trim().split(/\s+/)[0] ?? '';
  if (!word.startsWith('/')) return false;
  const name = word.slice(1);
  return (
    slashCommands.includes(name) ||
    name === 'exit' ||
    name === 'quit' ||
    /^[^/:]+:[^/:]+$/.test(name)
  );
}

/** What to say for a slash command that is none: the nearest one, or what does another agent's. */
function unknownCommandLine(command: string): string {
  const peer = peerSlashCommand(command);
  if (peer !== undefined) return `no ${command} here: ${peer}`;
  const meant = closestWord(command.slice(1), slashCommands);
  return meant === undefined
    ? `unknown command ${command}; /help lists them`
    : `unknown command ${command}: did you mean /${meant}? (/help lists them)`;
}
