import type { HooksConfig } from '@agent/command-hooks';
import type { CompactionOptions, PermissionMode } from '@agent/core';
import type { SandboxMode } from '@agent/sandbox';
import { explainParseError } from './args-slips.js';
import { baseUrlProblem } from './base-url.js';
import type { CodeModeSetting } from './code-mode.js';
import { refuseUnusedOptions } from './command-options.js';
import type { HelpTopic } from './help-text.js';
import { expandLeadingTilde } from './home-path.js';
import { type McpLogLevel, type McpServerEntry, mcpLogLevels } from './mcp-servers.js';
import { parseOptions } from './option-specs.js';
import { parseServeLimits, type ServeLimits, serveLimitFlags } from './serve-limits.js';
import { closestWord, peerMode } from './suggest.js';
import { parseToolList, type ToolList, ToolListError } from './tool-choice.js';
import { UsageError } from './usage-error.js';

export { type ServeLimits, serveLimitFlags } from './serve-limits.js';
export { UsageError } from './usage-error.js';

/** The providers the CLI can talk to. */
export type ProviderName = 'anthropic' | 'openai' | 'google';

/** How `-p` prints: a transcript and the answer, one JSON object at the end, or one JSON line per event. */
export type OutputFormat = 'text' | 'json' | 'stream-json';

/**
 * Where command hooks run in the OS sandbox: in folders the user has not trusted (the default),
 * in every folder, or nowhere.
 */
export type HooksSandboxSetting = 'untrusted-folders' | 'always' | 'off';

/** The `sandboxProtect` setting: which protections inside the workspace stay on [all]. */
export interface SandboxProtectSettings {
  /** The workspace's repositories (`.git`, nested ones too) stay read-only in the sandbox [true]. */
  git?: boolean;
  /** The home's startup files stay read-only when the workspace holds the home [true]. */
  startupFiles?: boolean;
  /**
   * What editors and tools run later without asking stays read-only at the workspace's top
   * (`.vscode`, `.idea`, `.devcontainer`, `.claude`, git hooks in the tree…) [true].
   */
  autoRunFiles?: boolean;
}

/** What the command line asked for, validated. */
export interface CliOptions {
  command: 'run' | 'demo' | 'help' | 'version' | 'mcp-serve' | 'mcp-login' | 'trust';
  /** `agent <command> --help`: the help of that command rather than the whole text. */
  helpTopic?: HelpTopic;
  /** `agent mcp login <server>`: the HTTP MCP server to sign in to. */
  mcpLoginServer?: string;
  /** `agent trust [list|revoke]`: what to do with the folder's trust [add]. */
  trustAction?: 'add' | 'list' | 'revoke';
  /** `--trust`: apply the folder's configuration for this run even if it is not trusted. */
  trust?: boolean;
  /** Whether the workspace is trusted (filled in by the trust step; undefined: not judged). */
  workspaceTrusted?: boolean;
  /** The id of this session (filled in at start: a resumed session's own, else a new one). */
  sessionId?: string;
  /** The project root whose configuration applies (filled in by the trust step; see project-root.ts). */
  projectRoot?: string;
  /** `agent mcp serve --http`: serve over Streamable HTTP on this port (0: any free) instead of stdio. */
  serveHttpPort?: number | undefined;
  /** `--token-file`: the bearer token `--http` requires, from this file (mode 0600) instead of a new one. */
  serveTokenFile?: string;
  /** `--no-auth`: `--http` serves anyone who can reach the port. */
  serveNoAuth?: boolean;
  /**
   * `agent mcp serve`'s caps per token (or per stdio client), from `--max-concurrent-calls`,
   * `--max-queued-calls`, `--max-pipelined-requests` and `--session-idle-minutes` (`--http` only)
   * or the user settings' `mcpServe` [8, 32, 16, 30].
   */
  serveLimits?: ServeLimits;
  /** `-p` text: one non-interactive run; `-` reads the prompt from stdin. */
  prompt: string | undefined;
  /** A positional prompt: the interactive session starts by running it. */
  initialPrompt: string | undefined;
  outputFormat: OutputFormat;
  /** `stream-json`: user messages are read from stdin, one JSON object per line, each a run. */
  inputFormat?: 'text' | 'stream-json';
  /** The OS sandbox of bash and sandboxed MCP servers [auto]. */
  sandbox: SandboxMode;
  provider: ProviderName | undefined;
  model: string | undefined;
  baseUrl: string | undefined;
  scripted: string | undefined;
  cwd: string;
  mcpConfig: string | undefined;
  /** Context compaction from the user settings (`compaction`): off, or the window and threshold. */
  compaction?: CompactionOptions | false;
  /** `--mcp-timeout` (or settings' `mcpTimeout`): seconds an MCP server has to start and answer [30]. */
  mcpTimeoutSeconds?: number;
  /** `--mcp-log-level`: MCP servers' log messages shown from this level up [warning]. */
  mcpLogLevel?: McpLogLevel | 'off' | undefined;
  openapi: { spec: string; name: string | undefined }[];
  mode: PermissionMode | undefined;
  allow: string[];
  ask: string[];
  deny: string[];
  /** The `--deny` rules of the command line alone (`deny` holds the settings' too, after applySettings). */
  denyFlags?: string[];
  maxTurns: number | undefined;
  /** `--max-tool-calls`: tool calls per run, its sub-agents' included. */
  maxToolCalls?: number;
  save: string | undefined;
  resume: string | undefined;
  systemPrompt: string | undefined;
  /** `--resume` without a file: list the workspace's saved sessions and pick one. */
  pickSession?: boolean;
  /** `--continue`: resume the workspace's newest saved session. */
  continueLast?: boolean;
  /** `--keep-grants` (or settings' `permissions.keepGrants`): a resumed session gets its "always" grants back. */
  keepGrants?: boolean;
  /** `--hosted-web-search`: the provider's own web search (Anthropic, OpenAI Responses, Gemini). */
  hostedWebSearch?: boolean;
  /** Whether `--sandbox` was given (settings may choose otherwise when it was not). */
  sandboxExplicit?: boolean;
  /** Whether `--cwd` named the workspace (not the folder the CLI was started in). */
  cwdExplicit?: boolean;
  /** Whether `--mode` was given (a session resumed while planning stays in plan mode when it was not). */
  modeExplicit?: boolean;
  /** MCP servers from settings files and `.mcp.json` (filled in by the settings step). */
  mcpServers?: McpServerEntry[];
  /** Command hooks from settings files (filled in by the settings step). */
  hooks?: HooksConfig;
  /** The user settings' `hooksSandbox`: where the hooks run in the OS sandbox [untrusted-folders]. */
  hooksSandbox?: HooksSandboxSetting;
  /** The user settings' `hooksSandboxNetwork`: the network of the hooks' sandbox [off]. */
  hooksSandboxNetwork?: 'on' | 'off';
  /** The user settings' `sandboxProtect`: which of the bash sandbox's protections stay on [all]. */
  sandboxProtect?: SandboxProtectSettings;
  /** `--pass-env` (and settings' `passEnv`): credential variables the tools' processes get anyway. */
  passEnv?: string[];
  /** Settings' `webFetchPrivateHosts` (user settings only): hosts web_fetch may reach on private addresses. */
  webFetchPrivateHosts?: string[];
  /** `--code-mode` (or the user settings' `codeMode`): a run_script tool where the tools are functions. */
  codeMode?: CodeModeSetting;
  /** `--tools` (after the settings step: the settings' lists, then the flag's): which tools the session offers. */
  tools?: ToolList[];
}

/** The commands, for "did you mean" (a lone word a letter or two from one is not sent as a prompt). */
const commandWords = ['demo', 'trust', 'mcp', 'help'] as const;

const modes: readonly PermissionMode[] = [
  'default',
  'read-only',
  'workspace-write',
  'full-access',
  'plan',
];
const outputFormats: readonly OutputFormat[] = ['text', 'json', 'stream-json'];
const sandboxModes: readonly SandboxMode[] = ['auto', 'required', 'off'];
const providers: readonly ProviderName[] = ['anthropic', 'openai', 'google'];
const openApiName = /^[a-zA-Z0-9_-]+$/;
const environmentName = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Splits `spec=name`: the text after the last `=` is a name when it is a simple word — but not
 * when that `=` is a URL's own query value (`https://x/spec?api_key=abc123` names no API
 * "abc123": a key taken for a name would become part of every tool's name the model sees). In a
 * query, a name follows a parameter that already has its value: `https://x/spec?format=json=api`.
 */
export function parseOpenApiFlag(value: string): { spec: string; name: string | undefined } {
  if (value === '') throw new UsageError('--openapi needs a path or URL');
  const at = value.lastIndexOf('=');
  if (at <= 0 || !openApiName.test(value.slice(at + 1))) return { spec: value, name: undefined };
  const query = /^https?:\/\//i.test(value) ? value.indexOf('?') : -1;
  if (query >= 0 && at > query) {
    const parameter = value.slice(Math.max(value.lastIndexOf('&', at), query) + 1, at);
    if (!parameter.includes('=')) return { spec: value, name: undefined };
  }
  return { spec: value.slice(0, at), name: value.slice(at + 1) };
}

/** What `-pp`, `-pc`, `-ph` or `-pv` means, and what to type instead. */
function gluedToPrint(typed: string): string {
  const letter = typed.slice(2);
  const meant: Record<string, string> = {
    p: 'give -p once: agent -p "your prompt"',
    c: 'to go on with the last session: agent -c -p "your prompt"',
    h: 'for the options: agent --help',
    v: 'for the version: agent --version',
  };
  return `${typed}: -p takes the text right after it as the prompt, so "${letter}" alone would be sent to the model; ${meant[letter] ?? 'agent -p "your prompt"'}`;
}

/** Parses argv (without `node` and the script); throws {@link UsageError} on any mistake. */
export function parseCliArgs(argv: readonly string[], cwd = process.cwd()): CliOptions {
  // `--resume` without a file (last, or before another option): pick from the saved sessions.
  const at = argv.indexOf('--resume');
  const pickSession = at >= 0 && (at === argv.length - 1 || (argv[at + 1] ?? '').startsWith('-'));
  if (pickSession) argv = [...argv.slice(0, at), ...argv.slice(at + 1)];
  // `-p` with no text after it (last, or before a long option): the prompt is the words given
  // apart from the options, else stdin — `echo data | agent -p`, as Claude Code reads it.
  const printAt = argv.findIndex((arg) => arg === '-p' || arg === '--print');
  const printFlag =
    printAt >= 0 && (printAt === argv.length - 1 || (argv[printAt + 1] ?? '').startsWith('--'));
  if (printFlag) argv = [...argv.slice(0, printAt), ...argv.slice(printAt + 1)];
  // A second -p would replace the first prompt without a word (parseArgs keeps the last value).
  const separatorAt = argv.indexOf('--');
  const prompts = (separatorAt < 0 ? argv : argv.slice(0, separatorAt)).filter((arg) =>
    /^(-p|--print)($|=)/.test(arg),
  );
  if (prompts.length + (printFlag ? 1 : 0) > 1)
    throw new UsageError(
      '-p is given twice: give one prompt (quote it: agent -p "first, then second")',
    );
  // `-pp`, `-pc`, `-pv`: a short option glued to -p is -p's value, and one letter went to the
  // model as the whole prompt (with words after it, "Unexpected argument" named neither slip).
  const glued = (separatorAt < 0 ? argv : argv.slice(0, separatorAt)).find((arg) =>
    /^-p[pchv]$/.test(arg),
  );
  if (glued !== undefined) throw new UsageError(gluedToPrint(glued));
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions(argv);
  } catch (error) {
    throw new UsageError(explainParseError(error));
  }
  const { values } = parsed;
  let { positionals } = parsed;
  if (printFlag) {
    if (values.print !== undefined) throw new UsageError('-p is given twice');
    values.print = positionals.length > 0 ? positionals.join(' ') : '-';
    positionals = [];
  }
  let command: CliOptions['command'] = 'run';
  let initialPrompt: string | undefined;
  let trustAction: CliOptions['trustAction'];
  let mcpLoginServer: string | undefined;
  let helpTopic: HelpTopic | undefined;
  // `agent help`, as git and npm take it; `agent -- help` sends the word as a prompt.
  const afterSeparator = argv.includes('--');
  // `agent help demo`, `agent help mcp serve`: that command's help, as `agent demo --help` (a
  // prompt that only starts with "help" — `agent help me fix it` — stays a prompt).
  if (
    !afterSeparator &&
    values.print === undefined &&
    positionals[0] === 'help' &&
    isCommandPath(positionals.slice(1))
  ) {
    values.help = true;
    positionals = positionals.slice(1);
  }
  // `agent help serve`, `agent help login`, `agent help list`, `agent help help`: a command's
  // last word or help itself, not a prompt (it was sent to the model at a terminal, and said as
  // "a prompt without -p…" elsewhere).
  const helpOf = helpAliases[positionals[1] ?? ''];
  if (
    !afterSeparator &&
    values.print === undefined &&
    positionals.length === 2 &&
    positionals[0] === 'help' &&
    helpOf !== undefined
  ) {
    values.help = true;
    positionals = helpOf;
  }
  if (
    !afterSeparator &&
    values.print === undefined &&
    positionals.length === 1 &&
    positionals[0] === 'help'
  )
    values.help = true;
  if (values.help) {
    command = 'help';
    helpTopic = helpTopicOf(positionals);
  } else if (values.version) command = 'version';
  else if (positionals.length > 0) {
    if (positionals[0] === 'mcp' && positionals[1] === 'serve' && positionals.length === 2)
      command = 'mcp-serve';
    else if (positionals[0] === 'mcp' && positionals[1] === 'login') {
      if (positionals.length !== 3 || positionals[2] === '')
        throw new UsageError('agent mcp login names one MCP server: agent mcp login <server>');
      command = 'mcp-login';
      mcpLoginServer = positionals[2];
    } else if (positionals[0] === 'mcp' && positionals[1] === 'serve')
      throw new UsageError(
        `agent mcp serve takes no arguments ("${positionals.slice(2).join(' ')}"): its options are in agent mcp serve --help`,
      );
    else if (positionals[0] === 'mcp')
      throw new UsageError(
        'Unknown mcp command: use "agent mcp serve [--http] [--port N]" or "agent mcp login <server>"',
      );
    else if (positionals[0] === 'demo' && positionals.length === 1) command = 'demo';
    else if (
      positionals[0] === 'trust' &&
      (positionals.length === 1 ||
        (positionals.length === 2 && ['list', 'revoke'].includes(positionals[1] ?? '')))
    ) {
      command = 'trust';
      trustAction = (positionals[1] ?? 'add') as 'add' | 'list' | 'revoke';
    } else if (positionals[0] === 'trust' && values.print === undefined)
      throw new UsageError(
        `Unknown trust command "${positionals.slice(1).join(' ')}": use agent trust, agent trust list or agent trust revoke (--cwd names the folder)`,
      );
    else if (positionals[0] === 'demo')
      throw new UsageError(
        `demo takes no arguments (to start a session with a prompt that begins with "demo", quote it: agent "${positionals.join(' ')}")`,
      );
    else if (values.print !== undefined)
      throw new UsageError(
        `Unexpected argument "${positionals.join(' ')}" next to -p (quote the whole prompt)`,
      );
    else {
      // `agent dmeo`: a lone word a letter or two from a command is a typo, not a prompt to pay for.
      const word = positionals[0] ?? '';
      const meant =
        positionals.length === 1 && !afterSeparator && /^[a-z]+$/i.test(word)
          ? closestWord(word, commandWords)
          : undefined;
      if (meant !== undefined)
        throw new UsageError(
          `Unknown command "${word}": did you mean agent ${meant === 'mcp' ? 'mcp serve' : meant}? (To start a session with "${word}" as its prompt: agent -- ${word})`,
        );
      initialPrompt = positionals.join(' ');
    }
  }
  // Before the options' own checks: an option the command would ignore is the first thing to say.
  refuseUnusedOptions(command, values, pickSession, trustAction);
  // An empty value (a variable that was not set: --cwd "$DIR") names no file or folder.
  for (const option of [
    'cwd',
    'save',
    'scripted',
    'resume',
    'mcp-config',
    'model',
    'base-url',
    'provider',
    'tools',
  ] as const) {
    const value = values[option];
    if (value === '' || (Array.isArray(value) && value.includes('')))
      throw new UsageError(
        `--${option} was given an empty value (an unset shell variable?): it needs ${emptyValueNeeds[option] ?? 'a file'}`,
      );
  }
  const outputFormat = values['output-format'] ?? 'text';
  if (!outputFormats.includes(outputFormat as OutputFormat)) {
    throw new UsageError(
      `Unknown output format "${outputFormat}": expected one of ${outputFormats.join(', ')}`,
    );
  }
  const sandbox = values.sandbox ?? 'auto';
  if (!sandboxModes.includes(sandbox as SandboxMode)) {
    throw new UsageError(
      `Unknown sandbox mode "${sandbox}": expected one of ${sandboxModes.join(', ')}`,
    );
  }
  const inputFormat = values['input-format'] ?? 'text';
  if (inputFormat !== 'text' && inputFormat !== 'stream-json')
    throw new UsageError(`Unknown input format "${inputFormat}": expected text or stream-json`);
  if (inputFormat === 'stream-json' && command === 'run' && initialPrompt !== undefined)
    throw new UsageError(
      '--input-format stream-json reads the messages from stdin: no prompt argument (or -p for the first message)',
    );
  if (
    outputFormat !== 'text' &&
    values.print === undefined &&
    inputFormat !== 'stream-json' &&
    command === 'run'
  ) {
    throw new UsageError(`--output-format ${outputFormat} needs -p (a one-shot run)`);
  }

  const provider = values.provider;
  if (provider !== undefined && !providers.includes(provider as ProviderName)) {
    throw new UsageError(`Unknown provider "${provider}": expected one of ${providers.join(', ')}`);
  }
  const mcpLogLevel = values['mcp-log-level'];
  if (
    mcpLogLevel !== undefined &&
    mcpLogLevel !== 'off' &&
    !mcpLogLevels.includes(mcpLogLevel as McpLogLevel)
  ) {
    throw new UsageError(
      `Unknown MCP log level "${mcpLogLevel}": expected one of ${mcpLogLevels.join(', ')}, off`,
    );
  }
  const mode = values.mode;
  if (mode !== undefined && !modes.includes(mode as PermissionMode)) {
    const peer = peerMode(mode);
    throw new UsageError(
      `Unknown mode "${mode}": expected one of ${modes.join(', ')}${peer === undefined ? '' : ` (for ${mode}, use ${peer})`}`,
    );
  }
  let mcpTimeoutSeconds: number | undefined;
  if (values['mcp-timeout'] !== undefined) {
    mcpTimeoutSeconds = Number(values['mcp-timeout']);
    if (!Number.isFinite(mcpTimeoutSeconds) || mcpTimeoutSeconds <= 0)
      throw new UsageError(
        `--mcp-timeout takes seconds (a number > 0, e.g. 10 or 0.5), got "${values['mcp-timeout']}"`,
      );
  }
  let maxTurns: number | undefined;
  if (values['max-turns'] !== undefined) {
    maxTurns = Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new UsageError(`--max-turns must be a whole number >= 1, got "${values['max-turns']}"`);
    }
  }
  let maxToolCalls: number | undefined;
  if (values['max-tool-calls'] !== undefined) {
    maxToolCalls = Number(values['max-tool-calls']);
    if (!Number.isInteger(maxToolCalls) || maxToolCalls < 1) {
      throw new UsageError(
        `--max-tool-calls must be a whole number >= 1, got "${values['max-tool-calls']}"`,
      );
    }
  }
  if (values.print !== undefined && values.print.trim() === '') {
    throw new UsageError(
      `-p was given an empty prompt (${JSON.stringify(values.print)}: an unset shell variable?): give the prompt, or -p alone (or -p -) to make what is piped in the prompt`,
    );
  }
  if (values['base-url'] !== undefined) {
    if (provider !== undefined && provider !== 'openai')
      throw new UsageError('--base-url is for OpenAI-compatible servers (--provider openai)');
    if (values.model === undefined)
      throw new UsageError('--base-url needs --model (the server decides which models exist)');
    const problem = baseUrlProblem(values['base-url']);
    if (problem !== undefined) throw new UsageError(`--base-url ${problem}`);
  }
  if (command === 'demo' && values.print !== undefined) {
    throw new UsageError('demo takes no -p');
  }
  let serveHttpPort: number | undefined;
  if (values.http === true || values.port !== undefined) {
    if (command !== 'mcp-serve') throw new UsageError('--http and --port are for agent mcp serve');
    serveHttpPort = values.port === undefined ? 0 : Number(values.port);
    if (!Number.isInteger(serveHttpPort) || serveHttpPort < 0 || serveHttpPort > 65535)
      throw new UsageError(`--port must be a port number, got "${values.port}"`);
  }
  const tokenFile = values['token-file'];
  if ((tokenFile !== undefined || values['no-auth'] === true) && serveHttpPort === undefined)
    throw new UsageError('--token-file and --no-auth are for agent mcp serve --http');
  if (tokenFile !== undefined && values['no-auth'] === true)
    throw new UsageError('--token-file sets the token that --no-auth turns off: use one');
  if (tokenFile === '') throw new UsageError('--token-file needs a path');
  if (pickSession && (values.continue === true || values.resume !== undefined))
    throw new UsageError('--continue and --resume both choose a conversation: use one');
  if (values.continue === true && values.resume !== undefined)
    throw new UsageError('--continue and --resume both choose a conversation: use one');
  if (command === 'mcp-serve' && values.print !== undefined)
    throw new UsageError('agent mcp serve takes no -p (the client calls the tools)');
  const serveLimits = parseServeLimits(values, serveHttpPort !== undefined);
  if (serveLimits !== undefined && command !== 'mcp-serve')
    throw new UsageError(
      `--${Object.values(serveLimitFlags).find(({ flag }) => values[flag] !== undefined)?.flag} is for agent mcp serve (the caps of the calls its clients make)`,
    );
  const passEnv = values['pass-env'] ?? [];
  for (const name of passEnv)
    if (!environmentName.test(name))
      throw new UsageError(
        name.includes('=')
          ? `--pass-env takes a variable's name, not an assignment: --pass-env ${name.slice(0, name.indexOf('='))} (its value comes from the environment)`
          : `--pass-env takes a variable's name (e.g. --pass-env GITHUB_TOKEN), got "${name}"`,
      );
  let tools: ToolList[] = [];
  try {
    tools = (values.tools ?? []).map((list) => parseToolList(list, '--tools'));
  } catch (error) {
    if (error instanceof ToolListError) throw new UsageError(error.message);
    throw error;
  }

  return {
    command,
    ...(helpTopic === undefined ? {} : { helpTopic }),
    ...(mcpLoginServer === undefined ? {} : { mcpLoginServer }),
    serveHttpPort,
    ...(tokenFile === undefined ? {} : { serveTokenFile: expandLeadingTilde(tokenFile) }),
    ...(values['no-auth'] === true ? { serveNoAuth: true } : {}),
    ...(serveLimits === undefined ? {} : { serveLimits }),
    prompt: values.print,
    initialPrompt,
    outputFormat: outputFormat as OutputFormat,
    ...(inputFormat === 'stream-json' ? { inputFormat } : {}),
    sandbox: sandbox as SandboxMode,
    provider: provider as ProviderName | undefined,
    model: values.model,
    baseUrl: values['base-url'],
    // A `~` the shell did not expand (`"~/x"`, a launcher with no shell) is the home.
    scripted: expandLeadingTilde(values.scripted),
    cwd: expandLeadingTilde(values.cwd) ?? cwd,
    mcpConfig: expandLeadingTilde(values['mcp-config']),
    ...(mcpLogLevel === undefined ? {} : { mcpLogLevel: mcpLogLevel as McpLogLevel | 'off' }),
    ...(mcpTimeoutSeconds === undefined ? {} : { mcpTimeoutSeconds }),
    openapi: (values.openapi ?? [])
      .map(parseOpenApiFlag)
      .map((entry) => ({ ...entry, spec: expandLeadingTilde(entry.spec) })),
    mode: mode as PermissionMode | undefined,
    allow: values.allow ?? [],
    ask: values.ask ?? [],
    deny: values.deny ?? [],
    maxTurns,
    ...(maxToolCalls === undefined ? {} : { maxToolCalls }),
    save: expandLeadingTilde(values.save),
    resume: expandLeadingTilde(values.resume),
    systemPrompt: values.system,
    sandboxExplicit: values.sandbox !== undefined,
    cwdExplicit: values.cwd !== undefined,
    ...(mode === undefined ? {} : { modeExplicit: true }),
    continueLast: values.continue === true,
    ...(values['keep-grants'] === true ? { keepGrants: true } : {}),
    ...(values.trust === true ? { trust: true } : {}),
    ...(trustAction === undefined ? {} : { trustAction }),
    ...(values['hosted-web-search'] === true ? { hostedWebSearch: true } : {}),
    pickSession,
    ...(passEnv.length === 0 ? {} : { passEnv }),
    ...(values['code-mode'] === true ? { codeMode: true } : {}),
    ...(tools.length === 0 ? {} : { tools }),
  };
}

/** What an option given `""` needed, for its message (a file, when not named here). */
const emptyValueNeeds: Partial<Record<string, string>> = {
  cwd: 'a folder',
  model: 'a model id',
  'base-url': 'a URL',
  provider: 'anthropic, openai or google',
  tools: 'a list of tools (default, a tool name, -name to remove one)',
};

/** `demo`, `trust`, `mcp`, `mcp serve`, `mcp login`: a command `agent help` can show. */
/** `agent help <word>` for a command named by its last word, or help itself. */
const helpAliases: Record<string, string[]> = {
  serve: ['mcp', 'serve'],
  login: ['mcp', 'login'],
  list: ['trust'],
  revoke: ['trust'],
  help: [],
};

function isCommandPath(words: readonly string[]): boolean {
  if (words.length === 1) return ['demo', 'trust', 'mcp'].includes(words[0] ?? '');
  return words.length === 2 && words[0] === 'mcp' && ['serve', 'login'].includes(words[1] ?? '');
}

/** The help topic of `agent <command> --help`; `undefined` for the whole text. */
function helpTopicOf(positionals: readonly string[]): HelpTopic | undefined {
  if (positionals[0] === 'demo' || positionals[0] === 'trust') return positionals[0];
  if (positionals[0] === 'mcp') return positionals[1] === 'login' ? 'mcp-login' : 'mcp-serve';
  return undefined;
}
