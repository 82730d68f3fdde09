import { errorMessage, terminalSafe } from '@agent/core';
import { keepAbsolutePath } from './config/absolute-path.js';
import { settleHomeVariables } from './config/agent-home.js';
import { type CliOptions, parseCliArgs, UsageError } from './config/args.js';
import { repeatedOptionNotice } from './config/args-slips.js';
import { baseUrlKeyWarning, commandLineHolds } from './config/base-url.js';
import { CliError } from './config/cli-error.js';
import { commandUsage, usage } from './config/help-text.js';
import { keepPythonBytecodePrivate } from './config/python-bytecode.js';
import { applySettings, type SessionRetention } from './config/settings.js';
import { fileSystemProblem, isInterrupt, outputProblem } from './config/system-errors.js';
import { startWithTrust } from './config/trust-flow.js';
import { versionsText } from './config/version.js';
import { runDemo } from './modes/demo.js';
import { printMode } from './modes/print.js';
import { replMode } from './modes/repl-mode.js';
import { requestedOutputFormat, startErrorLine } from './modes/stream-json.js';
import { askTrustOnTerminal, runTrustCommand } from './modes/trust-command.js';
import { checkWorkspace, exitCodeFor } from './session/session.js';
import { chooseSession } from './session/session-choice.js';
import { writeErr, writeNotice, writeOut } from './ui/output.js';
import { redactAlso, resetRedaction } from './ui/redaction.js';
import { adaptToTerminalCharset } from './ui/terminal-charset.js';

/** Runs the CLI and returns the exit code; user errors are printed without a stack. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  // Once parsed: the output format a failure is reported in.
  let parsed: CliOptions | undefined;
  let retention: SessionRetention = {};
  try {
    // Before anything is started by name (see absolute-path.ts); said where something will be.
    const pathNotice = keepAbsolutePath();
    // Before any settings are read from a home: a relative one is the project's folder.
    const homeNotice = settleHomeVariables();
    options = parseCliArgs(argv);
    parsed = options;
    if (pathNotice !== undefined && ['run', 'mcp-serve', 'mcp-login'].includes(options.command))
      writeNotice(pathNotice);
    if (homeNotice !== undefined) writeNotice(homeNotice);
    const repeated = repeatedOptionNotice(argv);
    if (repeated !== undefined && options.command !== 'help')
      for (const line of repeated.split('\n')) writeNotice(line);
    // Before any settings are read from it or trust is recorded for it: a typo in --cwd (or a
    // file) is said as such, not as an unreadable settings file or a trusted folder that is not there.
    if (
      options.command === 'run' ||
      options.command === 'mcp-serve' ||
      options.command === 'mcp-login' ||
      (options.command === 'trust' && (options.trustAction ?? 'add') === 'add')
    )
      await checkWorkspace(options.cwd);
    if (
      options.command === 'run' ||
      options.command === 'mcp-serve' ||
      options.command === 'mcp-login'
    ) {
      // Settings files under the flags, the project's only as far as the folder is trusted
      // (decided here, before anything of it runs); their env applies to this process (tools, servers).
      const interactive =
        options.command === 'run' &&
        options.prompt === undefined &&
        options.inputFormat !== 'stream-json' &&
        process.stdin.isTTY === true &&
        process.stdout.isTTY === true;
      const start = await startWithTrust(options, {
        defaultMode: interactive ? 'default' : 'read-only',
        ...(interactive
          ? { ask: askTrustOnTerminal(process.stdin, writeOut, process.stdout) }
          : {}),
      });
      for (const notice of start.notices) writeNotice(notice);
      retention = start.settings.sessions;
      Object.assign(process.env, start.settings.env);
      // A trusted project's PATH too: `.` in it runs the folder's files by name.
      const projectPathNotice = keepAbsolutePath();
      if (projectPathNotice !== undefined) writeNotice(projectPathNotice);
      // After the project's env: no Python started from here runs bytecode from the workspace.
      keepPythonBytecodePrivate();
      resetRedaction();
      // A key in --base-url (`…/v1?key=…`, `https://user:key@…`) is as much the user's secret
      // as one in OPENAI_BASE_URL: a server answering 404 quotes the path and query it was sent.
      if (options.baseUrl !== undefined) {
        redactAlso({ '--base-url': options.baseUrl });
        // Said only where the start could not take it off the command line (no execve).
        const warning = baseUrlKeyWarning(options.baseUrl);
        if (warning !== undefined && commandLineHolds(options.baseUrl)) writeNotice(warning);
      }
      options = {
        ...applySettings(options, start.settings, options.sandboxExplicit === true),
        workspaceTrusted: start.trusted,
        projectRoot: start.folder,
      };
    }
    if (options.command === 'run') options = await chooseSession(options, retention);
    switch (options.command) {
      case 'help':
        writeOut(options.helpTopic === undefined ? usage : commandUsage[options.helpTopic]);
        return 0;
      case 'version':
        writeOut(versionsText);
        return 0;
      case 'demo':
        return exitCodeFor(
          (await runDemo(writeOut, { codeMode: options.codeMode === true })).stopReason,
        );
      case 'trust':
        return await runTrustCommand(options, writeOut);
      case 'mcp-serve': {
        // Loaded only for this command: the MCP server side stays out of every other start-up.
        const { runMcpServe } = await import('./modes/mcp-serve.js');
        return await runMcpServe(options, writeNotice);
      }
      case 'mcp-login': {
        const { runMcpLogin } = await import('./modes/mcp-login.js');
        return await runMcpLogin(options, writeNotice);
      }
      case 'run':
        if (options.prompt !== undefined || options.inputFormat === 'stream-json')
          return await printMode(options);
        if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
          if (options.initialPrompt !== undefined) {
            throw new UsageError(
              'A prompt without -p starts an interactive session, but this is not a terminal: use agent -p "prompt"',
            );
          }
          // `agent --continue` alone after a crash: the run it cut off goes on, then the session ends.
          if (options.continueLast === true || options.resume !== undefined)
            return await printMode(options, true);
          // Which end is not a terminal: `agent | tee log` has a terminal for input, not for output.
          throw new UsageError(
            process.stdin.isTTY === true
              ? 'No prompt, and stdout is not a terminal, which an interactive session needs: pass -p "prompt" (-p writes the answer to the pipe)'
              : 'No prompt, and stdin is not a terminal, so there is no interactive session: pass -p "prompt", or … | agent -p to make what is piped in the prompt',
          );
        }
        return await replMode(options);
      default: {
        const exhaustive: never = options.command;
        throw new CliError(`Unknown command ${String(exhaustive)}`);
      }
    }
  } catch (error) {
    const stopped = stoppedOn(error);
    // A script that asked for JSON parses stdout: it gets the error there too, not nothing.
    const line = startErrorLine(
      requestedOutputFormat(argv, parsed),
      stopped.message,
      stopped.exitCode,
    );
    if (line !== undefined) writeOut(line);
    return stopped.exitCode;
  }
}

/** Says on stderr what stopped the CLI (a sentence, or the stack of a bug); the message and exit code. */
function stoppedOn(error: unknown): { message: string; exitCode: number } {
  if (error instanceof UsageError) {
    // The error alone, so it does not scroll away under the whole help text.
    writeErr(
      `agent: ${terminalSafe(error.message)}\nRun agent --help for the options and examples.\n`,
    );
    return { message: error.message, exitCode: 2 };
  }
  if (error instanceof CliError) {
    // Messages quote servers and files (an OAuth error_description): shown, never acted on.
    writeErr(`agent: ${terminalSafe(error.message)}\n`);
    return { message: error.message, exitCode: 1 };
  }
  // Ctrl-C at a question (the session picker): the user's way out, not a failure to report.
  if (isInterrupt(error)) {
    writeErr('\n');
    return { message: 'interrupted', exitCode: 130 };
  }
  // A folder the user cannot write, a full disk…: the user's to fix, so a sentence, not a stack.
  const problem = fileSystemProblem(error);
  if (problem !== undefined) {
    writeErr(`agent: ${terminalSafe(problem)}\n`);
    return { message: problem, exitCode: 1 };
  }
  // Anything else is a bug in the CLI or a package: keep the stack for the report.
  const message = `unexpected error: ${errorMessage(error)}`;
  writeErr(`agent: ${terminalSafe(message)}\n`);
  if (error instanceof Error && error.stack !== undefined)
    writeErr(`${terminalSafe(error.stack)}\n`);
  return { message, exitCode: 1 };
}

// A terminal whose locale is not UTF-8 (a Latin-1 one, LANG=C) is written and read in its own
// character set, from the first byte on (ui/terminal-charset.ts).
adaptToTerminalCharset();

// A crash is printed through the redaction like every other line (Node's own printer wrote the
// error as it was: one quoting a request — an SDK's headers, a server's answer — printed the key),
// then ends the CLI as Node would (exit code 1; exit handlers run). An unhandled rejection arrives
// here too (Node's default turns it into an uncaught exception).
process.on('uncaughtException', (error) => {
  const text = error instanceof Error ? (error.stack ?? error.message) : String(error);
  writeErr(`agent: uncaught error: ${terminalSafe(text)}\n`);
  process.exit(1);
});

// Set when stdout or stderr failed (see below): the exit code is then 1, whatever stopped.
let readerGone = false;
let outputFailed = false;

// A closed terminal (SIGHUP), or SIGTERM or SIGINT where no run is there to stop cleanly (start-up
// while MCP servers connect, the REPL's prompt), ends the CLI through process.exit, so exit
// handlers run: commands, MCP servers and language servers the tools started do not outlive it.
// A run's own handler, where one is installed, stops the run first.
for (const [signal, code] of [
  ['SIGINT', 130],
  ['SIGHUP', 129],
  ['SIGTERM', 143],
] as const) {
  process.on(signal, () => {
    if (process.listenerCount(signal) === 1) process.exit(outputFailed ? 1 : code);
  });
}

// A reader that went away (`agent demo | head`, `agent -p … | head -1`) is a SIGPIPE for a C
// program; for Node an 'error' event that, unhandled, printed a stack and left a running demo's
// temp folders behind. Stop as for SIGTERM instead: a run stops cleanly, clean-up runs. Writes
// after that fail the same way and are ignored. An output that cannot be written (`> answer.txt`
// on a full disk, an I/O error) stops the same way, said in one line on the other stream, exit 1
// (before: "uncaught error" and Node's stack).
function onOutputError(
  stream: NodeJS.WriteStream,
  error: NodeJS.ErrnoException,
  stop = true,
): void {
  if (readerGone) return;
  readerGone = true;
  if (error.code !== 'EPIPE') {
    outputFailed = true;
    if (stream === process.stdout) writeErr(`agent: ${outputProblem(error)}\n`);
  }
  if (stop) process.emit('SIGTERM', 'SIGTERM');
}
for (const stream of [process.stdout, process.stderr])
  stream.on('error', (error: NodeJS.ErrnoException) => onOutputError(stream, error));

const code = await main(process.argv.slice(2));
// A write that failed just before the end (agent --help > /dev/full) has not been reported yet.
for (const stream of [process.stdout, process.stderr])
  if (stream.errored !== null) onOutputError(stream, stream.errored, false);
// Exit explicitly: a provider's keep-alive socket or a stdin handle must not keep a finished CLI alive.
process.exit(outputFailed ? 1 : code);
