// What each command other than a session reads of the command line: any other option given to it
// would be silently ignored, so it is refused instead.
import type { CliOptions } from './args.js';
import type { ParsedOptions } from './option-specs.js';
import { UsageError } from './usage-error.js';

/**
 * The options a command other than a session reads; any other given to it would be silently
 * ignored, so it is refused instead. (`--help` and `--version` win over everything, as usual.)
 */
const commandOptions: Partial<
  Record<CliOptions['command'], { reads: readonly string[]; does: string }>
> = {
  demo: {
    reads: ['code-mode'],
    does: 'it runs a fixed script over the built-in tools in a temporary workspace, offline',
  },
  trust: { reads: ['cwd'], does: "it records, lists or revokes trust in a folder's configuration" },
  'mcp-serve': {
    reads: [
      'cwd',
      'mcp-config',
      'mcp-timeout',
      'openapi',
      'sandbox',
      'mode',
      'allow',
      'ask',
      'deny',
      'pass-env',
      'tools',
      'trust',
      'http',
      'port',
      'token-file',
      'no-auth',
      'max-concurrent-calls',
      'max-queued-calls',
      'max-pipelined-requests',
      'session-idle-minutes',
    ],
    does: 'it serves the tools to another client, which brings its own model and session',
  },
  'mcp-login': {
    reads: ['cwd', 'mcp-config', 'mcp-timeout', 'trust'],
    does: 'it signs in to one HTTP MCP server and keeps the token',
  },
};

/** Throws {@link UsageError} for an option the command would ignore (see {@link commandOptions}). */
export function refuseUnusedOptions(
  command: CliOptions['command'],
  values: ParsedOptions,
  pickSession: boolean,
  trustAction: CliOptions['trustAction'],
): void {
  const given = Object.entries(values)
    .filter(([, value]) => value !== undefined)
    .map(([name]) => name);
  if (pickSession) given.push('resume');
  // `agent trust list` lists every trusted folder: it reads no folder.
  const reads =
    command === 'trust' && trustAction === 'list'
      ? { reads: [], does: 'it lists every trusted folder' }
      : commandOptions[command];
  const name = command.startsWith('mcp-')
    ? `agent ${command.replace('-', ' ')}`
    : `agent ${command}`;
  if (reads !== undefined) {
    // -p has its own words for demo and mcp serve (below).
    const unused = given.filter(
      (option) =>
        !reads.reads.includes(option) &&
        (option !== 'print' || (command !== 'demo' && command !== 'mcp-serve')),
    );
    if (unused.length > 0) {
      const flags = unused.map((option) => `--${option}`).join(', ');
      const hint =
        command === 'demo' && unused.includes('tools')
          ? ' (to choose the tools, run a session: agent -p "…" --tools …)'
          : '';
      throw new UsageError(
        `${name} does not take ${flags}: ${reads.does}${hint}; it takes ${reads.reads.length === 0 ? 'no options' : reads.reads.map((option) => `--${option}`).join(', ')}`,
      );
    }
  }
  if (command !== 'run') return;
  if (
    values['keep-grants'] === true &&
    values.resume === undefined &&
    values.continue !== true &&
    !pickSession
  )
    throw new UsageError(
      '--keep-grants gives a resumed session its "always" answers back: use it with --resume or --continue',
    );
  if (values.scripted !== undefined) {
    const real = ['provider', 'base-url'].filter(
      (option) => values[option as 'provider'] !== undefined,
    );
    if (real.length > 0)
      throw new UsageError(
        `--scripted replays the turns of a file, so ${real.map((option) => `--${option}`).join(' and ')} would choose nothing: use one or the other`,
      );
  }
}
