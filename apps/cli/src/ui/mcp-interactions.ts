/**
 * What the CLI does when an MCP server turns to the client: elicitation (form fields or a URL)
 * asked on the terminal, sampling through the session's own model behind two approvals, roots =
 * the workspace, log messages shown from a level, and the OAuth URL printed and opened in a
 * browser. Without a terminal (`-p` with stdin not a TTY) elicitation is declined and sampling
 * refused, and the transcript says so.
 */
import { spawn } from 'node:child_process';
import {
  type AssistantMessage,
  credentialFreeEnvironment,
  type Message,
  type Provider,
  terminalSafe,
  type UserContent,
} from '@agent/core';
import { trustedProgram } from '@agent/sandbox';
import type { McpClientFeatures, McpLogEntry, McpRequestContext } from '@agent/tools-mcp';
import { type McpLogLevel, mcpLogLevels } from '../config/mcp-servers.js';
import { lookAlikeWarning } from './look-alikes.js';
import { askedDuring } from './mcp-asked-by.js';
import {
  choicesOf,
  defaultText,
  describeField,
  type FieldSchema,
  parseFieldAnswer,
} from './mcp-form-fields.js';
import {
  looksSecret,
  maxSamplingCharacters,
  maxSamplingTokens,
  notWebAddress,
  samplingSize,
} from './mcp-request-checks.js';
import { noticeBudget } from './notice-budget.js';
import { redactAlso } from './redaction.js';
import { droppedKeysNote, type OnQuestionReady, type RunKeys } from './terminal-keys.js';

type ElicitParams = Parameters<NonNullable<McpClientFeatures['elicitation']>>[0];
type ElicitResult = Awaited<ReturnType<NonNullable<McpClientFeatures['elicitation']>>>;
type SamplingParams = Parameters<NonNullable<McpClientFeatures['sampling']>>[0];
type SamplingResult = Awaited<ReturnType<NonNullable<McpClientFeatures['sampling']>>>;

/** The session's model, as sampling uses it (the session's `ModelChoice` fits). */
export interface SamplingModel {
  provider: Provider;
  model: string;
}

/** Options of {@link McpInteractions}. */
export interface McpInteractionOptions {
  /** The key reader of the terminal; `undefined` when nobody can be asked (`-p` without a TTY). */
  keys: RunKeys | undefined;
  /** Where questions go (the REPL's stdout, `-p`'s stderr). */
  write: (text: string) => void;
  /** One-line notices (declines, log messages, OAuth). */
  log: (line: string) => void;
  /** The workspace: the one root offered to servers. */
  cwd: string;
  /** Show servers' log messages from this level up (also sent as `logging/setLevel`) [warning]; `off` shows none. */
  logLevel?: McpLogLevel | 'off' | undefined;
  /** Whether `write` goes to a terminal (clears a spinner line before a question). */
  tty?: boolean;
  /** Opens a URL in a browser; `false` when it cannot. Default: `$BROWSER`, `open`, `xdg-open`. */
  openBrowser?: (url: string) => boolean;
}

const clearLine = '\r\u001b[K';
const ctrlC = '\u0003';

/** One line for the terminal: whitespace folded, cut at `max`. */
/** A server's text on one line, its control characters shown rather than obeyed (terminalSafe). */
function oneLine(text: string, max = 300): string {
  const line = terminalSafe(text.replace(/\s+/g, ' ').trim(), { singleLine: true });
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
}

/**
 * Opens `url` with `$BROWSER` (`none` disables it), else `open` (macOS), `xdg-open` (Linux and
 * BSDs) or `start` (Windows). Returns whether a browser command was started; only http and https
 * URLs are opened (see {@link notWebAddress}).
 */
export function openInBrowser(
  url: string,
  env = process.env,
  untrustedRoots: readonly string[] = [process.cwd()],
): boolean {
  if (notWebAddress(url) !== undefined) return false;
  const configured = env.BROWSER;
  if (configured === 'none') return false;
  let command: string;
  let args: string[];
  if (process.platform === 'win32' && (configured === undefined || configured === '')) {
    command = 'cmd';
    args = ['/c', 'start', '""', url];
  } else {
    // Found where no command could have put one: PATH may name a folder of the workspace (an
    // activated `.venv/bin`, `npx`'s `node_modules/.bin`) where a sandboxed command could write
    // an `xdg-open` of its own, which would run here, unsandboxed, at the next sign-in.
    const name =
      configured !== undefined && configured !== ''
        ? configured
        : process.platform === 'darwin'
          ? 'open'
          : 'xdg-open';
    const found = trustedProgram(name, { searchPath: env.PATH, untrustedRoots });
    if (!('path' in found)) return false;
    command = found.path;
    args = [url];
  }
  try {
    // None of the user's keys: a browser started here may live on for hours, its environ
    // readable by every process of the user.
    const child = spawn(command, args, {
      detached: true,
      stdio: 'ignore',
      env: credentialFreeEnvironment(env),
    });
    child.on('error', () => undefined);
    child.unref();
    return true;
  } catch {
    return false;
  }
}

/** A server's sampling messages as the session's provider takes them (text and images). */
export function samplingMessages(params: SamplingParams): Message[] {
  const timestamp = Date.now();
  return params.messages.map((message): Message => {
    const blocks = Array.isArray(message.content) ? message.content : [message.content];
    const parts: UserContent[] = blocks.map((block) => {
      const typed = block as { type: string; text?: string; data?: string; mimeType?: string };
      if (typed.type === 'text') return { type: 'text', text: typed.text ?? '' };
      if (typed.type === 'image' && typed.data !== undefined && typed.mimeType !== undefined)
        return { type: 'image', data: typed.data, mimeType: typed.mimeType };
      return { type: 'text', text: `[${typed.type} content]` };
    });
    if (message.role === 'user') return { role: 'user', content: parts, timestamp };
    const text = parts.map((part) => (part.type === 'text' ? part.text : '[image]')).join('\n');
    const assistant: AssistantMessage = {
      role: 'assistant',
      content: [{ type: 'text', text }],
      provider: 'mcp',
      model: 'mcp',
      usage: { input: 0, output: 0, cacheRead: 0, cacheWrite: 0, totalTokens: 0 },
      stopReason: 'stop',
      timestamp,
    };
    return assistant;
  });
}

/**
 * A warning line when a form asks for what looks like a secret: the MCP specification says
 * servers must not ask for sensitive information this way, and the answer goes to that server.
 */
function secretWarning(server: string, properties: readonly [string, FieldSchema][]): string {
  const secret = properties.find(([name, field]) => looksSecret(name, field));
  if (secret === undefined) return '';
  const [name, field] = secret;
  return `  ⚠ it asks for what looks like a secret (${oneLine(field.title ?? name, 80)}): MCP servers must not ask for secrets in a form, and what you type goes to ${server} (typing is not shown)\n`;
}

/** The fields of a form, for the question: the first twenty, then how many more. */
function fieldList(properties: readonly [string, FieldSchema][]): string {
  const shown = properties.slice(0, 20).map(([name, field]) => oneLine(field.title ?? name, 80));
  const more = properties.length - shown.length;
  return `${shown.join(', ')}${more > 0 ? `, and ${more} more` : ''}`;
}

/** The text of a sampling message, for the question. */
function messageSummary(message: SamplingParams['messages'][number]): string {
  const blocks = Array.isArray(message.content) ? message.content : [message.content];
  return blocks
    .map((block) => {
      const typed = block as { type: string; text?: string };
      return typed.type === 'text' ? (typed.text ?? '') : `[${typed.type}]`;
    })
    .join(' ');
}

/**
 * The CLI's answers to MCP servers' requests. One instance per session; `forServer(name)` gives
 * the options of that server's adapter. Questions are asked one at a time.
 */
export class McpInteractions {
  readonly #options: McpInteractionOptions;
  #model: (() => SamplingModel) | undefined;
  #queue: Promise<unknown> = Promise.resolve();
  /** Servers the user stopped asking ("[s] stop asking"). */
  readonly #stopped = new Set<string>();

  constructor(options: McpInteractionOptions) {
    this.#options = options;
  }

  /** Sampling uses the session's current model (it changes with `/model`). */
  useModel(model: () => SamplingModel): void {
    this.#model = model;
  }

  /** Whether questions can be asked (a terminal). */
  get interactive(): boolean {
    return this.#options.keys !== undefined;
  }

  /** The level of log messages shown, or `off`. */
  get logLevel(): McpLogLevel | 'off' {
    return this.#options.logLevel ?? 'warning';
  }

  /** The adapter options for one server: the handlers, the roots, the log level. */
  forServer(server: string): McpClientFeatures {
    const level = this.logLevel;
    // A server's log messages on the terminal, bounded (thousands of lines filled it).
    const log = noticeBudget(this.#options.log, { source: `mcp ${server}'s log` });
    return {
      elicitation: (params, context) => this.#serialised(() => this.elicit(params, context)),
      sampling: (params, context) => this.#serialised(() => this.sample(params, context)),
      roots: [this.#options.cwd],
      onLog: (entry) => this.showLog(entry, log),
      ...(level === 'off' ? {} : { logLevel: level }),
    };
  }

  /** Shows the OAuth authorization URL and opens it in a browser when there is a terminal. */
  authorize(server: string, url: URL): void {
    const scheme = notWebAddress(url.href);
    if (scheme !== undefined) {
      this.#options.log(
        `mcp ${server} needs authorization, but its authorization URL is not a web address (${scheme}), so it is not opened: ${url.href}`,
      );
      return;
    }
    const opened = this.interactive && this.#open(url.href);
    this.#options.log(
      `mcp ${server} needs authorization: ${opened ? 'opened in your browser; if it did not open, visit' : 'open'} ${url.href}`,
    );
  }

  /** A server's log message, shown (through `log`) when at or above the level. */
  showLog(entry: McpLogEntry, log: (line: string) => void = this.#options.log): void {
    const level = this.logLevel;
    if (level === 'off') return;
    if (mcpLogLevels.indexOf(entry.level) < mcpLogLevels.indexOf(level)) return;
    const data = typeof entry.data === 'string' ? entry.data : JSON.stringify(entry.data);
    const logger = entry.logger === undefined ? '' : ` ${oneLine(entry.logger, 80)}:`;
    log(`mcp ${entry.server} [${entry.level}]${logger} ${oneLine(data ?? '', 500)}`);
  }

  /** `elicitation/create`: URL mode or a form, asked on the terminal. */
  async elicit(params: ElicitParams, context: McpRequestContext): Promise<ElicitResult> {
    const keys = this.#options.keys;
    const message = oneLine(params.message);
    const during = askedDuring(context.callers);
    // The user said "stop asking" to this server: declined unasked (a server could ask for ever).
    if (this.#stopped.has(context.server)) return { action: 'decline' };
    if (keys === undefined) {
      this.#options.log(
        `${during}mcp ${context.server} asked for input ("${message}"): declined, this run is not interactive (no terminal to ask on)`,
      );
      return { action: 'decline' };
    }
    if (params.mode === 'url') {
      const url = (params as { url: string }).url;
      const shownUrl = oneLine(url, 2000);
      const scheme = notWebAddress(url);
      if (scheme !== undefined) {
        // Declined unasked: a "y" to such a URL would hand it to whatever opens that scheme.
        this.#options.log(
          `${during}mcp ${context.server} asked you to open a URL that is not a web address (${oneLine(scheme, 40)}): declined, not opened: ${shownUrl}`,
        );
        return { action: 'decline' };
      }
      this.#write(
        `${this.#start()}${during}mcp ${context.server} asks you to open a URL: ${message}\n  ${shownUrl}\n  (it opens ${oneLine(new URL(url).host, 300)})\n${lookAlikeWarning(shownUrl)}Open it? `,
      );
      const answer = await this.#choose(keys, context.signal, [
        ['y', 'open'],
        ['n', 'decline'],
        ['c', 'cancel'],
        ['s', 'stop asking'],
      ]);
      if (answer !== 'y') return this.#ended(answer, context.server);
      const opened = this.#open(url);
      this.#write(`→ ${opened ? 'opened in your browser' : 'open it yourself'}: ${shownUrl}\n`);
      return { action: 'accept' };
    }
    const schema = (params as { requestedSchema?: { properties?: object; required?: string[] } })
      .requestedSchema;
    const properties = Object.entries((schema?.properties ?? {}) as Record<string, FieldSchema>);
    const required = new Set(schema?.required ?? []);
    this.#write(
      `${this.#start()}${during}mcp ${context.server} asks for input: ${message}\n  ${properties.length} field(s): ${fieldList(properties)}\n${secretWarning(context.server, properties)}Answer? `,
    );
    const answer = await this.#choose(keys, context.signal, [
      ['y', 'fill in'],
      ['n', 'decline'],
      ['c', 'cancel'],
      ['s', 'stop asking'],
    ]);
    if (answer !== 'y') return this.#ended(answer, context.server);
    this.#write(
      '→ filling in\n  Enter keeps the default [shown] or leaves an optional field out; Ctrl-C cancels.\n',
    );
    const content: Record<string, unknown> = {};
    for (const [name, field] of properties) {
      const choices = choicesOf(field);
      const fallback = defaultText(field, choices);
      const label = oneLine(field.title ?? name, 80);
      const about = field.description === undefined ? '' : ` — ${oneLine(field.description, 120)}`;
      const marks = `${required.has(name) ? ', required' : ''}${fallback === '' ? '' : ` [${fallback}]`}`;
      while (true) {
        this.#write(
          `  ${label}${about} (${terminalSafe(`${describeField(field, choices)}${marks}`, { singleLine: true })}): `,
        );
        const line = await this.#readLine(keys, context.signal, looksSecret(name, field));
        if (line === undefined) return this.#ended('c', context.server);
        if (line.trim() === '') {
          if (field.default !== undefined) {
            content[name] = field.default;
            break;
          }
          if (!required.has(name)) break;
          this.#write('    ✗ required\n');
          continue;
        }
        const parsed = parseFieldAnswer(field, line);
        if ('value' in parsed) {
          content[name] = parsed.value;
          // What the user typed into a secret field is theirs: a server that repeats it in a
          // result or an error must not hand it to the model or the session file.
          if (looksSecret(name, field) && typeof parsed.value === 'string')
            redactAlso({ [`${context.server} secret ${name}`]: parsed.value });
          break;
        }
        this.#write(`    ✗ ${oneLine(parsed.error)}\n`);
      }
    }
    this.#write(`→ sent ${Object.keys(content).length} field(s) to ${context.server}\n`);
    return { action: 'accept', content: content as Record<string, string> };
  }

  /** `sampling/createMessage`: approved on the terminal, run on the session's model, approved again. */
  async sample(params: SamplingParams, context: McpRequestContext): Promise<SamplingResult> {
    const keys = this.#options.keys;
    const choice = this.#model?.();
    const during = askedDuring(context.callers);
    if (this.#stopped.has(context.server))
      throw new Error('Sampling refused by the client: the user stopped this server asking');
    if (keys === undefined || choice === undefined) {
      const why =
        keys === undefined
          ? 'this run is not interactive (nobody to approve it)'
          : 'the session is still starting';
      this.#options.log(
        `${during}mcp ${context.server} asked the model for a completion: refused, ${why}`,
      );
      throw new Error(`Sampling refused by the client: ${why}`);
    }
    const size = samplingSize(params);
    if (size.characters > maxSamplingCharacters) {
      const why = `its ${size.messages} message(s) hold ${size.characters.toLocaleString('en-US')} characters, over the ${maxSamplingCharacters.toLocaleString('en-US')} a server may send`;
      this.#options.log(
        `${during}mcp ${context.server} asked the model for a completion: refused, ${why}`,
      );
      throw new Error(`Sampling refused by the client: ${why}`);
    }
    const maxTokens = Math.min(params.maxTokens, maxSamplingTokens);
    const asked =
      maxTokens < params.maxTokens
        ? ` (it asked for ${params.maxTokens.toLocaleString('en-US')})`
        : '';
    const lines = [
      `${this.#start()}${during}mcp ${context.server} asks ${choice.model} for a completion (up to ${maxTokens.toLocaleString('en-US')} tokens${asked}; ${size.messages} message(s), ${size.characters.toLocaleString('en-US')} characters in all):`,
    ];
    if (params.systemPrompt !== undefined)
      lines.push(`  system: ${oneLine(params.systemPrompt, 200)}`);
    // The last four are shown; what comes before is counted, so nothing is sent unseen.
    const earlier = params.messages.length - 4;
    if (earlier > 0) lines.push(`  … ${earlier} earlier message(s) not shown`);
    for (const message of params.messages.slice(-4))
      lines.push(`  ${message.role}: ${oneLine(messageSummary(message), 300)}`);
    this.#write(`${lines.join('\n')}\nRun it? `);
    const answer = await this.#choose(keys, context.signal, [
      ['y', 'run'],
      ['n', 'deny'],
      ['s', 'stop asking'],
    ]);
    // The answer ends the question's line: left open, the next line drawn over it erased it.
    this.#write(
      `→ ${answer === 'y' ? 'running it' : answer === undefined ? 'cancelled' : 'denied'}\n`,
    );
    if (answer === 's') this.#stop(context.server);
    if (answer !== 'y') {
      throw new Error('The user denied this sampling request');
    }
    const reply = await this.#complete(choice, { ...params, maxTokens }, context.signal);
    const text = reply.content
      .map((part) => (part.type === 'text' ? part.text : ''))
      .join('')
      .trim();
    this.#write(
      `${this.#start()}  ${choice.model}: ${oneLine(text, 500)}\nSend it to ${context.server}? `,
    );
    const send = await this.#choose(keys, context.signal, [
      ['y', 'send'],
      ['n', 'withhold'],
    ]);
    this.#write(`→ ${send === 'y' ? 'sent' : 'withheld'}\n`);
    if (send !== 'y') {
      throw new Error('The user withheld the completion');
    }
    return {
      role: 'assistant',
      content: { type: 'text', text },
      model: reply.model,
      stopReason: reply.stopReason === 'length' ? 'maxTokens' : 'endTurn',
    };
  }

  async #complete(
    choice: SamplingModel,
    params: SamplingParams,
    signal: AbortSignal,
  ): Promise<AssistantMessage> {
    const events = choice.provider.stream(
      {
        model: choice.model,
        messages: samplingMessages(params),
        maxOutputTokens: params.maxTokens,
        ...(params.systemPrompt === undefined ? {} : { systemPrompt: params.systemPrompt }),
        ...(params.temperature === undefined ? {} : { temperature: params.temperature }),
      },
      { signal },
    );
    for await (const event of events) {
      if (event.type === 'done') return event.message;
      if (event.type === 'error') throw new Error(`The model failed: ${event.error.message}`);
    }
    throw new Error('The model ended without an answer');
  }

  /** From now on, the server's requests for input or a completion are refused unasked. */
  #stop(server: string): void {
    this.#stopped.add(server);
    this.#write(
      `→ mcp ${server} will not ask again this session: its requests for input or a completion are declined unasked\n`,
    );
  }

  /** Runs questions one after another (one key reader, one terminal). */
  #serialised<T>(task: () => Promise<T>): Promise<T> {
    const next = this.#queue.then(task, task);
    this.#queue = next.catch(() => undefined);
    return next;
  }

  #write(text: string): void {
    this.#options.write(text);
  }

  /** Clears a spinner line before a question on a terminal. */
  #start(): string {
    return this.#options.tty === true ? `${clearLine}\n` : '\n';
  }

  #open(url: string): boolean {
    if (notWebAddress(url) !== undefined) return false;
    return (this.#options.openBrowser ?? openInBrowser)(url);
  }

  #ended(answer: string | undefined, server: string): ElicitResult {
    if (answer === 's') this.#stop(server);
    const action = answer === 'n' || answer === 's' ? 'decline' : 'cancel';
    this.#write(`→ ${action === 'decline' ? 'declined' : 'cancelled'}\n`);
    return { action };
  }

  /**
   * One of the `choices`' keys (the first letter of a chunk); `undefined` on Ctrl-C or an abort.
   * The keys (`[y] run  [n] deny`) are drawn once the question has been on screen a moment
   * (questionSettleMs): keys pressed before are not the answer.
   */
  async #choose(
    keys: RunKeys,
    signal: AbortSignal,
    choices: readonly (readonly [key: string, label: string])[],
  ): Promise<string | undefined> {
    const onReady: OnQuestionReady = (dropped) =>
      this.#write(
        `${choices.map(([key, label]) => `[${key}] ${label}`).join('  ')} ${droppedKeysNote(dropped)}`,
      );
    for (let first = true; ; first = false) {
      const key = await keys.nextKey(signal, first ? { onReady } : {});
      if (key === undefined || key.includes(ctrlC)) return undefined;
      const answer = key.trim().charAt(0).toLowerCase();
      if (choices.some(([allowed]) => allowed === answer)) return answer;
    }
  }

  /** A line typed on the terminal (echoed; backspace edits); `undefined` on Ctrl-C or an abort. */
  async #readLine(keys: RunKeys, signal: AbortSignal, masked = false): Promise<string | undefined> {
    let line = '';
    while (true) {
      const chunk = await keys.nextKey(signal, { readsText: true });
      if (chunk === undefined) return undefined;
      for (let i = 0; i < chunk.length; i++) {
        const char = chunk[i] as string;
        if (char === ctrlC) return undefined;
        if (char === '\r' || char === '\n') {
          this.#write('\n');
          return line;
        }
        if (char === '\u007f' || char === '\b') {
          if (line !== '') {
            line = line.slice(0, -1);
            this.#write('\b \b');
          }
        } else if (char === '\u001b') {
          // An escape sequence (arrows): skip to its final byte.
          i += 2;
          while (i < chunk.length && !/[@-~]/.test(chunk[i] as string)) i += 1;
        } else if (char >= ' ') {
          line += char;
          this.#write(masked ? '•' : char);
        }
      }
    }
  }
}
