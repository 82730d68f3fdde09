import { parseArgs } from 'node:util';
import type { PermissionMode } from '@agent/core';

/** The providers the CLI can talk to. */
export type ProviderName = 'anthropic' | 'openai' | 'google';

/** What the command line asked for, validated. */
export interface CliOptions {
  command: 'run' | 'demo' | 'help' | 'version';
  /** `-p` text: one non-interactive run. */
  prompt: string | undefined;
  provider: ProviderName | undefined;
  model: string | undefined;
  baseUrl: string | undefined;
  scripted: string | undefined;
  cwd: string;
  mcpConfig: string | undefined;
  openapi: { spec: string; name: string | undefined }[];
  mode: PermissionMode | undefined;
  allow: string[];
  ask: string[];
  deny: string[];
  maxTurns: number | undefined;
  save: string | undefined;
  resume: string | undefined;
  systemPrompt: string | undefined;
}

/** A mistake on the command line: printed with the usage text, exit code 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** The help text. */
export const usage = `Usage:
  agent [options]                 interactive session (needs a terminal)
  agent -p "prompt" [options]     one run; the final answer goes to stdout
  agent demo                      offline demo: a scripted model drives the real tools

Model:
  --provider <name>        anthropic | openai | google   [first with an API key set:
                           ANTHROPIC_API_KEY, OPENAI_API_KEY, GEMINI_API_KEY/GOOGLE_API_KEY]
  --model <id>             model id   [claude-sonnet-4-6 | gpt-5-mini | gemini-2.5-flash]
  --base-url <url>         an OpenAI-compatible server (Ollama, vLLM, …); needs --model
  --scripted <file.json>   no network: replay the assistant turns in this file
  --system <text>          system prompt

Tools:
  --cwd <dir>              workspace of the built-in tools   [current directory]
  --mcp-config <file>      { "mcpServers": { "name": { "command", "args", "env" } | { "url" } } }
  --openapi <spec>[=name]  an OpenAPI document (path or URL) as tools; repeatable

Permissions:
  --mode <mode>            default | read-only | workspace-write | full-access
                           [default in a session, read-only with -p]
  --allow <rule>           e.g. 'bash(git *)'; repeatable
  --ask <rule>             always ask, e.g. 'bash(git push*)'; repeatable
  --deny <rule>            e.g. 'bash(rm *)'; repeatable

Session:
  -p, --print <prompt>     run once, non-interactively
  --max-turns <n>          model calls per run   [100]
  --save <file>            write the conversation (JSON) after every run
  --resume <file>          continue a conversation saved with --save or /save
  -h, --help               this text
  -v, --version            the version

Exit codes: 0 completed, 1 error, 2 usage, 3 max-turns, 130 aborted.
`;

const modes: readonly PermissionMode[] = ['default', 'read-only', 'workspace-write', 'full-access'];
const providers: readonly ProviderName[] = ['anthropic', 'openai', 'google'];
const openApiName = /^[a-zA-Z0-9_-]+$/;

/**
 * Splits `spec=name`: the text after the last `=` is a name when it is a simple word, so a URL
 * with a query string needs an explicit name (`https://x/spec?format=json=api`).
 */
export function parseOpenApiFlag(value: string): { spec: string; name: string | undefined } {
  const at = value.lastIndexOf('=');
  if (at > 0 && openApiName.test(value.slice(at + 1))) {
    return { spec: value.slice(0, at), name: value.slice(at + 1) };
  }
  if (value === '') throw new UsageError('--openapi needs a path or URL');
  return { spec: value, name: undefined };
}

/** Parses argv (without `node` and the script); throws {@link UsageError} on any mistake. */
export function parseCliArgs(argv: readonly string[], cwd = process.cwd()): CliOptions {
  let parsed: ReturnType<typeof parse>;
  try {
    parsed = parse(argv);
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
  const { values, positionals } = parsed;
  let command: CliOptions['command'] = 'run';
  if (values.help) command = 'help';
  else if (values.version) command = 'version';
  else if (positionals.length > 0) {
    if (positionals[0] === 'demo' && positionals.length === 1) command = 'demo';
    else
      throw new UsageError(
        `Unexpected argument "${positionals.join(' ')}" (a prompt goes after -p)`,
      );
  }

  const provider = values.provider;
  if (provider !== undefined && !providers.includes(provider as ProviderName)) {
    throw new UsageError(`Unknown provider "${provider}": expected one of ${providers.join(', ')}`);
  }
  const mode = values.mode;
  if (mode !== undefined && !modes.includes(mode as PermissionMode)) {
    throw new UsageError(`Unknown mode "${mode}": expected one of ${modes.join(', ')}`);
  }
  let maxTurns: number | undefined;
  if (values['max-turns'] !== undefined) {
    maxTurns = Number(values['max-turns']);
    if (!Number.isInteger(maxTurns) || maxTurns < 1) {
      throw new UsageError(`--max-turns must be a whole number >= 1, got "${values['max-turns']}"`);
    }
  }
  if (values.print !== undefined && values.print.trim() === '') {
    throw new UsageError('-p needs a prompt');
  }
  if (values['base-url'] !== undefined) {
    if (provider !== undefined && provider !== 'openai')
      throw new UsageError('--base-url is for OpenAI-compatible servers (--provider openai)');
    if (values.model === undefined)
      throw new UsageError('--base-url needs --model (the server decides which models exist)');
  }
  if (command === 'demo' && values.print !== undefined) {
    throw new UsageError('demo takes no -p');
  }

  return {
    command,
    prompt: values.print,
    provider: provider as ProviderName | undefined,
    model: values.model,
    baseUrl: values['base-url'],
    scripted: values.scripted,
    cwd: values.cwd ?? cwd,
    mcpConfig: values['mcp-config'],
    openapi: (values.openapi ?? []).map(parseOpenApiFlag),
    mode: mode as PermissionMode | undefined,
    allow: values.allow ?? [],
    ask: values.ask ?? [],
    deny: values.deny ?? [],
    maxTurns,
    save: values.save,
    resume: values.resume,
    systemPrompt: values.system,
  };
}

function parse(argv: readonly string[]) {
  return parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      print: { type: 'string', short: 'p' },
      provider: { type: 'string' },
      model: { type: 'string' },
      'base-url': { type: 'string' },
      scripted: { type: 'string' },
      system: { type: 'string' },
      cwd: { type: 'string' },
      'mcp-config': { type: 'string' },
      openapi: { type: 'string', multiple: true },
      mode: { type: 'string' },
      allow: { type: 'string', multiple: true },
      ask: { type: 'string', multiple: true },
      deny: { type: 'string', multiple: true },
      'max-turns': { type: 'string' },
      save: { type: 'string' },
      resume: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
      version: { type: 'boolean', short: 'v' },
    },
  });
}
