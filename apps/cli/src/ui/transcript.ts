import {
  type AgentEvent,
  type AssistantMessage,
  type ToolResultMessage,
  terminalSafe,
  toolResultText,
  type Usage,
} from '@agent/core';
import { nestedCallsLine } from './code-mode-lines.js';
import { compactionLine } from './compaction-lines.js';
import { describeFailure } from './failure-line.js';
import { changedPath, isFileChangeTool, paintDiff, readText, unifiedDiff } from './file-diff.js';
import { heldWhileAsking } from './held-output.js';
import { streamRedactor } from './redaction.js';
import { modelWait, WaitSpinner } from './wait-spinner.js';

/** Options of a {@link Transcript}. */
export interface TranscriptOptions {
  /** Where the transcript goes (stdout in a session, stderr with -p). */
  write: (text: string) => void;
  /** Stream the assistant's text as it arrives [true]; off, text is shown only beside tool calls. */
  streamText?: boolean;
  /**
   * Markdown rendering of the assistant's text (a terminal with colours): each text block is shown
   * rendered when it is complete (a spinner says `writing` meanwhile) instead of streamed raw. The
   * renderer is loaded lazily: while it returns undefined, text streams raw as without it.
   */
  markdown?: () => ((text: string) => string) | undefined;
  /** The workspace: with it, write_file and edit_file results are followed by their unified diff. */
  cwd?: string;
  /** Colour diffs and result marks (a TTY without NO_COLOR) [false]. */
  colour?: boolean;
  /** Show a spinner with the elapsed time while tools run (a TTY only); `paused()` holds it (an approval is asked). */
  spinner?: { paused: () => boolean; columns?: () => number | undefined };
  /**
   * True while a question waits for its answer on the same terminal: what the transcript would
   * print meanwhile (another agent's calls and results, the spinner's clearing) is printed once
   * it is answered ({@link heldWhileAsking}).
   */
  questionOpen?: () => boolean;
}

const maxArgumentChars = 200;
const maxResultChars = 160;
const maxDenialChars = 1000;

/** Shortens `text` to `max` characters with an ellipsis. */
export function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * A tool call's arguments on one line: compact JSON (strings exactly as given, newlines escaped),
 * or the raw text when it is malformed, with its line breaks shown as `\n`.
 */
export function formatArguments(raw: string): string {
  let text: string;
  try {
    text = JSON.stringify(JSON.parse(raw));
  } catch {
    // Malformed arguments are shown as the model wrote them; the loop reports the error.
    text = raw.replace(/\r?\n/g, '\\n');
  }
  return clip(text, maxArgumentChars);
}

// The lines of an untrusted-content fence (core's `untrustedNote` and markers): the model's
// warning, not what the tool found, so the one-line summary shows what lies inside.
const fenceLine =
  /^(?:Untrusted: the text between the UNTRUSTED [A-Z]+ CONTENT markers .*|----- (?:BEGIN|END) UNTRUSTED [A-Z]+ CONTENT [0-9a-f]{12} -----)$/;

/** `text` without the lines of its untrusted-content fences. */
function withoutFences(text: string): string {
  if (!text.includes(' UNTRUSTED ')) return text;
  return text
    .split('\n')
    .filter((line) => !fenceLine.test(line))
    .join('\n')
    .trim();
}

/** The status line bash ends a failed command's output with. */
const exitStatus = /^Exit code: (\d+|unknown)( \(signal \w+\))?$/;

/**
 * A tool result on one line: its first non-empty line and how many more there are, led by the
 * exit status when a command failed. A denial is shown whole (up to a much larger limit): its
 * reason says how to allow the call.
 */
export function summarizeResult(
  message: Pick<ToolResultMessage, 'content'> & {
    errorKind?: string | undefined;
    isError?: boolean;
  },
): string {
  const max = message.errorKind === 'denied' ? maxDenialChars : maxResultChars;
  const text = withoutFences(toolResultText(message.content));
  const json = compactJson(text);
  if (json !== undefined) return clip(json, max);
  const lines = text.split('\n').filter((line) => line.trim() !== '');
  const firstLine = lines[0] === '[stderr]' && lines.length > 1 ? `[stderr] ${lines[1]}` : lines[0];
  const first = clip((firstLine ?? '(no output)').trim(), max);
  // What the OS sandbox blocked is worth a line of its own, wherever the tool put it.
  const blocked = lines.find(
    (line, index) => index > 0 && line.startsWith('Blocked by the sandbox'),
  );
  const lined = lines.length > 1 ? `${first} (+${lines.length - 1} lines)` : first;
  // A failed command leads with its exit status (bash puts it last, after the output).
  const status =
    message.isError === true ? lines.findLast((line) => exitStatus.test(line)) : undefined;
  const summary = status === undefined ? lined : `${status.trim()} · ${lined}`;
  return blocked === undefined ? summary : `${summary}\n      ${clip(blocked, maxDenialChars)}`;
}

/** Pretty-printed JSON (MCP, OpenAPI results) on one line; `undefined` for anything else. */
function compactJson(text: string): string | undefined {
  const trimmed = text.trim();
  if (!/^[[{]/.test(trimmed)) return undefined;
  try {
    return JSON.stringify(JSON.parse(trimmed));
  } catch {
    return undefined;
  }
}

/**
 * What sandboxed commands made that the user's git or shell runs later (bash's
 * `details.sandboxPlanted`, duck-typed): said to the user here, not left to the model.
 */
function plantedLine(details: unknown): string | undefined {
  const planted = (details as { sandboxPlanted?: unknown } | undefined)?.sandboxPlanted;
  if (!Array.isArray(planted) || planted.length === 0) return undefined;
  const paths = planted.filter((entry): entry is string => typeof entry === 'string');
  return `  ! sandboxed commands made ${paths.join(', ')}: what a repository's hooks and config or a startup file hold runs with your next git command there or your next shell, outside the sandbox; look before using it`;
}

/** The details a sub-agent tool streams (`@agent/subagent`'s SubAgentUpdateDetails), duck-typed so the transcript does not load the package. */
interface ChildUpdate {
  agentName: string;
  depth: number;
  event: AgentEvent;
}

function isChildUpdate(value: unknown): value is ChildUpdate {
  if (value === null || typeof value !== 'object') return false;
  const record = value as Record<string, unknown>;
  return (
    typeof record.childLoopId === 'string' &&
    typeof record.agentName === 'string' &&
    typeof record.event === 'object' &&
    record.event !== null
  );
}

/** A sub-agent's progress, indented under the call that started it: its calls and results. */
function childLines(details: unknown): string[] {
  if (!isChildUpdate(details)) return [];
  const { event, agentName, depth } = details;
  const indent = '  '.repeat(depth + 1);
  if (event.type === 'tool-execution-update') return childLines(event.partial.details);
  if (event.type !== 'message-end') return [];
  const { message } = event;
  if (message.role === 'assistant')
    return message.content.flatMap((block) =>
      block.type === 'toolCall'
        ? [`${indent}│ ${agentName} → ${block.name} ${formatArguments(block.arguments)}`]
        : [],
    );
  if (message.role === 'toolResult') {
    const mark = message.isError ? '✗' : '✓';
    return [`${indent}│ ${agentName} ${mark} ${message.toolName}: ${summarizeResult(message)}`];
  }
  return [];
}

/**
 * Where the Markdown streamed so far can be cut so that the part before is complete blocks: just
 * after the last blank line that is outside a fenced code block and followed by a line starting
 * at column 0 (so an indented continuation of a list item is never cut off from it). 0 when there
 * is no such place yet.
 */
export function markdownFlushPoint(text: string): number {
  let point = 0;
  let inFence = false;
  let offset = 0;
  let previousBlank = false;
  for (const line of text.split('\n')) {
    const start = offset;
    offset += line.length + 1;
    if (offset > text.length) break; // the last line is not complete yet
    if (/^ {0,3}(```|~~~)/.test(line)) inFence = !inFence;
    const blank = line.trim() === '';
    if (!inFence && previousBlank && !blank && !/^\s/.test(line) && start > 0) point = start;
    previousBlank = blank && !inFence;
  }
  return point;
}

/**
 * What the model, a tool or a server wrote, as the transcript shows it: control characters shown,
 * not obeyed (a carriage return or `ESC [2K` would rewrite the screen; see core's terminalSafe).
 */
const safe = (text: string) => terminalSafe(text);
/** {@link safe} for text kept on one line (names, arguments, URLs). */
const safeLine = (text: string) => terminalSafe(text, { singleLine: true });

/** Prints agent events as a readable transcript: streamed text, each call with its arguments, one line per result. */
export class Transcript {
  /** The terminal, through the hold while a question waits (held-output.ts). */
  readonly #write: (text: string) => void;
  /** The terminal itself, for what the user's own keys caused while a question waits. */
  readonly #direct: (text: string) => void;
  readonly #questionOpen: () => boolean;
  /** Streamed text is shown through this: a credential split across two deltas is redacted too. */
  #redactor = streamRedactor();
  readonly #streamText: boolean;
  readonly #cwd: string | undefined;
  readonly #colour: boolean;
  /** The spinner line (a terminal only). */
  readonly #spinner: WaitSpinner | undefined;
  readonly #markdown: (() => ((text: string) => string) | undefined) | undefined;
  /** The renderer a text block started with (the block is then held back until its end). */
  #rendering: ((text: string) => string) | undefined;
  /** Text of the current block not shown yet (markdown mode): complete blocks are shown as they end. */
  #unrendered = '';
  #atLineStart = true;
  /** Files before a write_file/edit_file call ran, by call id. */
  readonly #before = new Map<string, { path: string; text: string | undefined }>();
  /** Call lines of multi-call turns, printed above their results. */
  readonly #pendingCalls = new Map<string, string>();

  constructor(options: TranscriptOptions) {
    this.#direct = options.write;
    this.#questionOpen = options.questionOpen ?? (() => false);
    this.#write =
      options.questionOpen === undefined
        ? options.write
        : heldWhileAsking(options.write, options.questionOpen);
    this.#streamText = options.streamText ?? true;
    this.#cwd = options.cwd;
    this.#colour = options.colour ?? false;
    this.#spinner =
      options.spinner === undefined
        ? undefined
        : new WaitSpinner({
            write: (text) => this.#write(text),
            paused: options.spinner.paused,
            atLineStart: () => this.#atLineStart,
            ...(options.spinner.columns === undefined ? {} : { columns: options.spinner.columns }),
          });
    this.#markdown = options.markdown;
  }

  /**
   * Prints a line the user's own keys caused (a message sent to steer the run), at once: while a
   * question waits it is not held with the rest — it answers what the user just did.
   */
  lineNow(text: string): void {
    // No question open: an ordinary line (the spinner cleared first).
    if (!this.#questionOpen()) this.line(text);
    else this.#direct(`${text}\n`);
  }

  /** Prints text on lines of its own. */
  line(text: string): void {
    this.#clearSpinner();
    this.#endLine();
    this.#write(`${text}\n`);
  }

  #mark(ok: boolean): string {
    if (!this.#colour) return ok ? '✓' : '✗';
    return ok ? '\u001b[32m✓\u001b[39m' : '\u001b[31m✗\u001b[39m';
  }

  #clearSpinner(): void {
    this.#spinner?.clear();
  }

  #toolStarted(id: string, name: string, args: unknown): void {
    if (this.#cwd !== undefined && isFileChangeTool(name)) {
      const path = changedPath(this.#cwd, args);
      if (path !== undefined) this.#before.set(id, { path, text: readText(path) });
    }
    this.#showRunning(id, name);
  }

  /** Shows `name` with its elapsed time in the spinner until `#toolEnded(id)`. */
  #showRunning(id: string, name: string): void {
    this.#spinner?.show(id, name);
  }

  #renameRunning(id: string, name: string): void {
    this.#spinner?.rename(id, name);
  }

  #toolEnded(id: string): void {
    this.#spinner?.end(id);
  }

  /** The diff a finished file call made, printed under its result. */
  #resultDiff(id: string, ok: boolean, toolName: string): void {
    const before = this.#before.get(id);
    this.#before.delete(id);
    if (before === undefined || !ok) return;
    if (!isFileChangeTool(toolName)) return;
    const after = readText(before.path);
    if (before.text === undefined || after === undefined) return;
    const diff = unifiedDiff(before.path, before.text, after);
    if (diff !== '') this.line(paintDiff(diff, this.#colour));
  }

  /** Prints one event. */
  onEvent(event: AgentEvent): void {
    switch (event.type) {
      case 'turn-start':
        // A model that takes its time before the first token (or never sends one) showed nothing
        // at all: the screen looked hung. Said with the time waited until the answer starts.
        this.#showRunning(modelWait, 'waiting for the model');
        return;
      case 'message-update': {
        const update = event.event;
        // Until the answer shows: `start` (headers) and `usage` show nothing; thinking is named.
        if (update.type === 'thinking-start') this.#renameRunning(modelWait, 'thinking');
        else if (update.type === 'text-start' || update.type === 'tool-call-start') {
          // Not streamed (-p text: the answer goes to stdout at the end), a long answer showed
          // nothing while it came: the wait is named until the message ends.
          if (this.#streamText) this.#toolEnded(modelWait);
          else this.#renameRunning(modelWait, 'answering');
        }
        if (update.type === 'text-start' && this.#streamText) {
          this.#rendering = this.#markdown?.();
          this.#unrendered = '';
          this.#redactor = streamRedactor();
          if (this.#rendering !== undefined) this.#showRunning('text', 'writing');
        } else if (update.type === 'text-delta' && this.#streamText) {
          const render = this.#rendering;
          if (render === undefined) this.#text(safe(this.#redactor.push(update.delta)));
          else {
            // Paragraphs, lists, tables and code blocks are shown rendered as soon as they end.
            this.#unrendered += safe(update.delta);
            const end = markdownFlushPoint(this.#unrendered);
            if (end > 0) {
              const done = this.#unrendered.slice(0, end);
              this.#unrendered = this.#unrendered.slice(end);
              if (done.trim() !== '') this.line(`${render(done)}\n`);
            }
          }
        } else if (update.type === 'text-end' && this.#streamText) {
          if (this.#rendering === undefined) {
            this.#text(safe(this.#redactor.flush()));
            this.#endLine();
          } else {
            this.#toolEnded('text');
            this.#flushMarkdown();
          }
        } else if (update.type === 'thinking-end' && update.thinking !== '')
          this.line(`  (thinking) ${clip(safe(update.thinking.replace(/\s+/g, ' ')), 200)}`);
        return;
      }
      case 'message-end': {
        this.#toolEnded(modelWait);
        const { message } = event;
        if (message.role === 'assistant') {
          const calls = message.content.filter((block) => block.type === 'toolCall');
          if (!this.#streamText && calls.length > 0) {
            for (const block of message.content)
              if (block.type === 'text' && block.text.trim() !== '')
                this.line(safe(block.text.trim()));
          }
          // Sources the provider's own web search cited (--hosted-web-search).
          const sources = new Map<string, string>();
          for (const block of message.content)
            if (block.type === 'text')
              for (const citation of block.citations ?? [])
                sources.set(citation.url, citation.title ?? citation.url);
          if (sources.size > 0) {
            this.line('  Sources:');
            for (const [url, title] of sources)
              this.line(
                title === url
                  ? `    - ${safeLine(url)}`
                  : `    - ${safeLine(title)} — ${safeLine(url)}`,
              );
          }
          if (calls.length === 1)
            for (const call of calls)
              this.line(`  → ${safeLine(call.name)} ${safeLine(formatArguments(call.arguments))}`);
          else if (calls.length > 1) {
            // Several calls: each is printed again right above its result, so they pair up.
            this.line(
              `  → ${calls.length} calls: ${calls.map((call) => safeLine(call.name)).join(', ')}`,
            );
            for (const call of calls)
              this.#pendingCalls.set(
                call.id,
                `  → ${safeLine(call.name)} ${safeLine(formatArguments(call.arguments))}`,
              );
          }
        } else if (message.role === 'toolResult') {
          const call = this.#pendingCalls.get(message.toolCallId);
          if (call !== undefined) {
            this.#pendingCalls.delete(message.toolCallId);
            this.line(call);
          }
          const mark = this.#mark(!message.isError);
          const kind =
            message.isError && message.errorKind !== undefined ? ` [${message.errorKind}]` : '';
          this.line(
            `  ${mark} ${safeLine(message.toolName)}${kind}: ${safe(summarizeResult(message))}`,
          );
          const nested = nestedCallsLine(message.details);
          if (nested !== undefined) this.line(safe(nested));
          const planted = plantedLine(message.details);
          if (planted !== undefined) this.line(safe(planted));
          this.#resultDiff(message.toolCallId, !message.isError, message.toolName);
        }
        return;
      }
      case 'progress':
        this.line(`    … ${safeLine(event.toolName)}: ${clip(safe(event.text), maxResultChars)}`);
        return;
      case 'tool-execution-update': {
        // send_user_message: the message is for the user, shown whole as it arrives.
        const message = (event.partial.details as { userMessage?: unknown } | undefined)
          ?.userMessage;
        if (typeof message === 'string') this.line(`  ✉ ${safe(message)}`);
        // One line each: a child's model names its tools, and a line break there would start a
        // line of its own that reads like the transcript's.
        else for (const line of childLines(event.partial.details)) this.line(safeLine(line));
        return;
      }
      case 'tool-execution-start':
        this.#toolStarted(event.toolCallId, event.toolName, event.args);
        return;
      case 'tool-execution-end':
        this.#toolEnded(event.toolCallId);
        return;
      case 'compaction-start':
      case 'compaction-end':
        this.#endLine();
        this.line(safe(compactionLine(event) ?? ''));
        return;
      case 'agent-end':
        this.#spinner?.endAll();
        this.#before.clear();
        this.#pendingCalls.clear();
        // An interrupted answer: what was written of it is still shown.
        this.#flushMarkdown();
        this.#endLine();
        this.#usageLine(event.messages, event.treeUsage);
        if (event.stopReason === 'aborted') this.line('(aborted)');
        else if (event.stopReason === 'max-turns') this.line('(stopped: max turns reached)');
        else if (event.stopReason === 'loop-detected')
          this.line(`(stopped: ${safe(event.error ?? 'the model kept repeating the same call')})`);
        else if (event.stopReason === 'budget-exhausted')
          this.line(`(stopped: ${safe(event.budgetReason ?? 'the run budget is spent')})`);
        else if (event.stopReason === 'error')
          this.line(`error: ${safe(describeFailure(event.error, event.providerError))}`);
        return;
      default:
        return;
    }
  }

  /**
   * Tokens (and cost, when the model's prices are known) of the run that ended — its sub-agents'
   * included (`treeUsage`): what a delegated task spent is part of what the run cost.
   */
  #usageLine(messages: readonly { role: string }[], treeUsage: Usage | undefined): void {
    let input = 0;
    let output = 0;
    let cached = 0;
    let cost: number | undefined;
    for (const message of messages) {
      if (message.role !== 'assistant') continue;
      const usage = (message as AssistantMessage).usage;
      input += usage.input;
      output += usage.output;
      cached += usage.cacheRead;
      if (usage.cost !== undefined) cost = (cost ?? 0) + usage.cost.total;
    }
    const own = input + output + cached;
    let children = '';
    if (treeUsage !== undefined && treeUsage.input + treeUsage.output + treeUsage.cacheRead > own) {
      ({ input, output, cacheRead: cached } = treeUsage);
      cost = treeUsage.cost?.total ?? cost;
      children = ', sub-agents included';
    }
    if (input + output + cached === 0) return;
    const price = cost === undefined ? '' : ` · $${cost.toFixed(4)}`;
    const fromCache = cached === 0 ? '' : ` (+${cached} from cache)`;
    this.line(`  (${input} tokens in${fromCache}, ${output} out${price}${children})`);
  }

  /** Shows the rest of a Markdown block and leaves markdown mode. */
  #flushMarkdown(): void {
    const render = this.#rendering;
    const rest = this.#unrendered;
    this.#rendering = undefined;
    this.#unrendered = '';
    if (render !== undefined && rest.trim() !== '') this.line(render(rest));
  }

  #text(delta: string): void {
    if (delta === '') return;
    this.#clearSpinner();
    this.#write(delta);
    this.#atLineStart = delta.endsWith('\n');
  }

  #endLine(): void {
    if (!this.#atLineStart) this.#write('\n');
    this.#atLineStart = true;
  }
}
