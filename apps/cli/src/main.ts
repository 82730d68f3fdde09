import { readFileSync } from 'node:fs';
import { errorMessage, messageText } from '@agent/core';
import { type CliOptions, parseCliArgs, UsageError, usage } from './args.js';
import { CliError } from './cli-error.js';
import { runDemo } from './demo.js';
import { runRepl } from './repl.js';
import { createSession, exitCodeFor, runPrompt, saveConversation } from './session.js';
import { RunKeys, terminalApprover } from './terminal-keys.js';
import { Transcript } from './transcript.js';

const writeOut = (text: string) => process.stdout.write(text);
const writeErr = (text: string) => process.stderr.write(text);

function version(): string {
  try {
    const url = new URL('../package.json', import.meta.url);
    return (JSON.parse(readFileSync(url, 'utf8')) as { version?: string }).version ?? 'unknown';
  } catch {
    return 'unknown';
  }
}

/** One `-p` run: the transcript goes to stderr, the final answer to stdout. */
async function printMode(options: CliOptions, prompt: string): Promise<number> {
  const interactive = process.stdin.isTTY === true;
  const keys = interactive ? new RunKeys(process.stdin) : undefined;
  const session = await createSession(options, {
    mode: options.mode ?? 'read-only',
    approver: keys === undefined ? undefined : terminalApprover(keys, writeErr),
    log: (line) => writeErr(`${line}\n`),
  });
  let abort: (() => void) | undefined;
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    // The first signal stops the run cleanly (tools cancelled, conversation saved); a second one quits now.
    if (signals > 1) process.exit(130);
    abort?.();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const transcript = new Transcript({ write: writeErr, streamText: false });
    const result = await runPrompt(session, prompt, transcript, {
      onStart: (stop) => {
        abort = stop;
        keys?.start(stop);
      },
    });
    keys?.stop();
    const answer = result.finalMessage === undefined ? '' : messageText(result.finalMessage);
    if (result.stopReason === 'completed' || result.stopReason === 'terminated') {
      if (answer !== '') writeOut(answer.endsWith('\n') ? answer : `${answer}\n`);
    }
    if (options.save !== undefined) await saveConversation(session.agent, options.save);
    return exitCodeFor(result.stopReason);
  } finally {
    keys?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session.close();
  }
}

/** The interactive session. */
async function replMode(options: CliOptions): Promise<number> {
  const keys = new RunKeys(process.stdin);
  const session = await createSession(options, {
    mode: options.mode ?? 'default',
    approver: terminalApprover(keys, writeOut),
    log: (line) => writeErr(`${line}\n`),
  });
  try {
    return await runRepl({
      session,
      keys,
      input: process.stdin,
      output: process.stdout,
      savePath: options.save,
    });
  } finally {
    keys.stop();
    await session.close();
  }
}

/** Runs the CLI and returns the exit code; user errors are printed without a stack. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  try {
    options = parseCliArgs(argv);
    switch (options.command) {
      case 'help':
        writeOut(usage);
        return 0;
      case 'version':
        writeOut(`${version()}\n`);
        return 0;
      case 'demo':
        return exitCodeFor((await runDemo(writeOut)).stopReason);
      case 'run':
        if (options.prompt !== undefined) return await printMode(options, options.prompt);
        if (process.stdin.isTTY !== true || process.stdout.isTTY !== true) {
          throw new UsageError(
            'No prompt: pass -p "prompt" (stdin is not a terminal, so there is no interactive session)',
          );
        }
        return await replMode(options);
      default: {
        const exhaustive: never = options.command;
        throw new CliError(`Unknown command ${String(exhaustive)}`);
      }
    }
  } catch (error) {
    if (error instanceof UsageError) {
      writeErr(`agent: ${error.message}\n\n${usage}`);
      return 2;
    }
    if (error instanceof CliError) {
      writeErr(`agent: ${error.message}\n`);
      return 1;
    }
    // Anything else is a bug in the CLI or a package: keep the stack for the report.
    writeErr(`agent: unexpected error: ${errorMessage(error)}\n`);
    if (error instanceof Error && error.stack !== undefined) writeErr(`${error.stack}\n`);
    return 1;
  }
}

const code = await main(process.argv.slice(2));
// Exit explicitly: a provider's keep-alive socket or a stdin handle must not keep a finished CLI alive.
process.exit(code);
