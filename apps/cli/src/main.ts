import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import {
  type AgentEvent,
  type ApprovalDecision,
  errorMessage,
  messageText,
  type PermissionApprover,
} from '@agent/core';
import { type CliOptions, parseCliArgs, UsageError, usage } from './args.js';
import { pruneCheckpoints } from './checkpoints.js';
import { CliError } from './cli-error.js';
import { runDemo } from './demo.js';
import { McpInteractions } from './mcp-interactions.js';
import { terminalPlanApprover } from './plan-mode.js';
import { projectRootNotice } from './project-root.js';
import { PromptInput } from './prompt-input.js';
import { redactText, resetRedaction } from './redaction.js';
import { runRepl } from './repl.js';
import {
  createSession,
  deniedWithoutApproverExitCode,
  exitCodeFor,
  loadConversation,
  loadSavedSession,
  nonInteractiveApprover,
  runPrompt,
} from './session.js';
import {
  defaultSessionKeepDays,
  findSessionById,
  isSessionId,
  listSessions,
  newSessionPath,
  pruneSessions,
} from './sessions.js';
import { applySettings, type SessionRetention } from './settings.js';
import {
  permissionAsked,
  runSummary,
  type StreamJsonEvent,
  streamJsonEvents,
  streamJsonInputSchema,
} from './stream-json.js';
import { RunKeys, terminalApprover } from './terminal-keys.js';
import { agentHome } from './tool-sources.js';
import { Transcript } from './transcript.js';
import {
  askMcpToolChangesOnTerminal,
  askTrustOnTerminal,
  runTrustCommand,
} from './trust-command.js';
import { startWithTrust } from './trust-flow.js';
import { versionsText } from './version.js';

// No credential value of the environment in the transcript or the JSON output (see redaction.ts).
const writeOut = (text: string) => process.stdout.write(redactText(text));
const writeErr = (text: string) => process.stderr.write(redactText(text));

/** Reads all of stdin (when it is a pipe or a file). */
async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

/** The `-p` prompt: `-` is stdin itself; otherwise piped stdin is appended under the prompt. */
async function resolvePrompt(prompt: string): Promise<string> {
  const piped = process.stdin.isTTY !== true;
  if (prompt === '-') {
    if (!piped)
      throw new UsageError(
        '-p has no prompt: give it after -p (agent -p "…") or on stdin (echo "…" | agent -p); stdin is a terminal',
      );
    const text = await readStdin();
    if (text.trim() === '')
      throw new UsageError(
        '-p has no prompt: none after -p, and stdin was empty (agent -p "…", or echo "…" | agent -p)',
      );
    return text;
  }
  if (!piped) return prompt;
  const text = await readStdin();
  return text.trim() === '' ? prompt : `${prompt}\n\n${text}`;
}

/**
 * The messages of a `-p` session: the `-p` prompt (with piped stdin), or with
 * `--input-format stream-json` the `-p` prompt if any and then one user message per stdin line.
 */
async function* promptsOf(options: CliOptions, stop: AbortSignal): AsyncGenerator<string> {
  if (options.inputFormat !== 'stream-json') {
    yield await resolvePrompt(options.prompt ?? '-');
    return;
  }
  if (options.prompt !== undefined && options.prompt !== '-') yield options.prompt;
  const { createInterface } = await import('node:readline');
  const lines = createInterface({ input: process.stdin, crlfDelay: Number.POSITIVE_INFINITY });
  // A signal between runs ends the session: no more lines are read.
  stop.addEventListener('abort', () => lines.close(), { once: true });
  let number = 0;
  for await (const line of lines) {
    if (stop.aborted) return;
    number += 1;
    if (line.trim() === '') continue;
    yield inputMessage(line, number);
  }
}

/** The text of one `--input-format stream-json` line; a line that is not a user message is an error. */
function inputMessage(line: string, number: number): string {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (error) {
    throw new CliError(`stdin line ${number} is not JSON: ${errorMessage(error)}`);
  }
  const parsed = streamJsonInputSchema.safeParse(data);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new CliError(
      `stdin line ${number} is not a user message ({"type":"user","message":{"role":"user","content":"…"}}): ${issue === undefined ? 'invalid' : `${issue.path.join('.') || '(line)'}: ${issue.message}`}`,
    );
  }
  const { content } = parsed.data.message;
  return typeof content === 'string' ? content : content.map((part) => part.text).join('\n');
}

/** Wraps an approver so every question and answer is also reported (stream-json). */
function reportingApprover(
  approver: PermissionApprover,
  emit: (event: StreamJsonEvent) => void,
): PermissionApprover {
  return async (request, context) => {
    emit(permissionAsked(request));
    const decision: ApprovalDecision = await approver(request, context);
    const answer = typeof decision === 'string' ? decision : decision.answer;
    const reason = typeof decision === 'string' ? undefined : decision.reason;
    emit({
      type: 'permission-answered',
      toolCallId: request.toolCallId,
      toolName: request.toolName,
      answer,
      ...(reason === undefined ? {} : { reason }),
    });
    return decision;
  };
}

/** What a `-p` session runs: the runs a crash cut off (resumed), then the first message and the rest. */
async function* runInputs(
  resumes: readonly string[],
  first: string | undefined,
  prompts: AsyncGenerator<string> | undefined,
): AsyncGenerator<string | { resume: string }> {
  for (const runId of resumes) yield { resume: runId };
  if (first === undefined || prompts === undefined) return;
  yield first;
  yield* prompts;
}

/** Colours on a terminal unless NO_COLOR is set (https://no-color.org). */
function useColour(stream: NodeJS.WriteStream): boolean {
  return stream.isTTY === true && (process.env.NO_COLOR ?? '') === '';
}

/**
 * One `-p` run. Text: the transcript goes to stderr, the final answer to stdout. json: one object
 * on stdout at the end. stream-json: one JSON object per line on stdout for every event.
 */
async function printMode(options: CliOptions, resumeOnly = false): Promise<number> {
  if (options.inputFormat === 'stream-json' && process.stdin.isTTY === true)
    throw new UsageError(
      '--input-format stream-json reads JSON lines from stdin, but stdin is a terminal',
    );
  const stopInput = new AbortController();
  const prompts = promptsOf(options, stopInput.signal);
  // The first message before anything starts (an empty stdin or a bad line starts nothing).
  const first = resumeOnly ? undefined : await prompts.next();
  if (first?.done === true) throw new CliError('No message on stdin (--input-format stream-json)');
  const format = options.outputFormat;
  const emit = (event: StreamJsonEvent) => writeOut(`${JSON.stringify(event)}\n`);
  const interactive = process.stdin.isTTY === true;
  const keys = interactive ? new RunKeys(process.stdin) : undefined;
  const fallback = nonInteractiveApprover();
  const colour = useColour(process.stderr);
  const approver =
    keys === undefined
      ? fallback
      : terminalApprover(keys, writeErr, { cwd: resolve(options.cwd), colour });
  const log = (line: string) => writeErr(`${line}\n`);
  const session = await createSession(options, {
    mode: options.mode ?? 'read-only',
    approver: format === 'stream-json' ? reportingApprover(approver, emit) : approver,
    // Plan mode in -p: the plan is the answer (on stdout as text; in the JSON formats, the call's arguments).
    ...(format === 'text'
      ? { printPlan: (plan: string) => writeOut(plan.endsWith('\n') ? plan : `${plan}\n`) }
      : {}),
    log,
    // Without a terminal, servers' questions are declined and sampling refused (with a notice).
    mcpInteractions: new McpInteractions({
      keys,
      write: writeErr,
      log,
      cwd: resolve(options.cwd),
      logLevel: options.mcpLogLevel,
      tty: process.stderr.isTTY === true,
    }),
  });
  if (resumeOnly && session.runsToResume.length === 0) {
    await session.close();
    throw new UsageError(
      'No prompt: pass -p "prompt" (stdin is not a terminal, and no run of this session was cut off by a crash)',
    );
  }
  const sessionId = session.id;
  if (format === 'stream-json') {
    emit({
      type: 'run-start',
      sessionId,
      model: session.model.label,
      cwd: resolve(options.cwd),
      permissionMode: session.policy.mode,
      sandbox: session.tools.sandbox.describe(),
      tools: session.tools.tools.map((tool) => tool.name),
    });
  } else if (format === 'text') {
    writeErr(`bash: ${session.tools.sandbox.describe()}\n`);
    const project = projectRootNotice(session);
    if (project !== undefined) writeErr(`${project}\n`);
  }
  let abort: (() => void) | undefined;
  let signals = 0;
  const onSignal = () => {
    signals += 1;
    // The first signal stops the run cleanly (tools cancelled, conversation saved); a second one quits now.
    if (signals > 1) process.exit(130);
    // During a run it stops the run; between runs (stream-json input) it ends the session.
    if (abort === undefined) stopInput.abort();
    else abort();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    const transcript =
      format === 'text'
        ? new Transcript({
            write: writeErr,
            streamText: false,
            cwd: resolve(options.cwd),
            colour,
            ...(keys !== undefined && process.stderr.isTTY === true
              ? { spinner: { paused: () => keys.waiting } }
              : {}),
          })
        : {
            onEvent: (event: AgentEvent) => {
              if (format === 'stream-json') for (const line of streamJsonEvents(event)) emit(line);
            },
          };
    // One run per message: just the -p prompt, or every line of --input-format stream-json.
    let code = 0;
    // Runs a crash cut off come first (--continue), then the messages.
    const inputs = runInputs(session.runsToResume, first?.value, resumeOnly ? undefined : prompts);
    for (let next = await inputs.next(); next.done !== true; next = await inputs.next()) {
      const prompt = next.value;
      const deniedBefore = fallback.denied();
      const result = await runPrompt(session, prompt, transcript, {
        onStart: (stop) => {
          abort = stop;
          keys?.start(stop);
        },
        onNotice: (line) => writeErr(`${line}\n`),
        savePath: options.save,
      });
      keys?.stop();
      abort = undefined;
      // A UserPromptSubmit hook blocked the prompt (the notice said why).
      if (result === undefined) code = 1;
      else {
        const summary = runSummary(sessionId, result, fallback.denied() - deniedBefore);
        if (format === 'json') writeOut(`${JSON.stringify(summary)}\n`);
        else if (format === 'stream-json') emit({ ...summary, type: 'run-end' });
        else if (result.stopReason === 'completed' || result.stopReason === 'terminated') {
          let answer = result.finalMessage === undefined ? '' : messageText(result.finalMessage);
          // On a terminal with colours the answer's Markdown is rendered (loaded only then).
          if (answer !== '' && useColour(process.stdout)) {
            const { createMarkdownRenderer } = await import('./markdown.js');
            answer = createMarkdownRenderer(process.stdout.columns ?? 80)(answer);
          }
          if (answer !== '') writeOut(answer.endsWith('\n') ? answer : `${answer}\n`);
        }
        if (options.save !== undefined) await session.save(options.save);
        code = exitCodeFor(result.stopReason);
      }
      // An interrupted run ends the session; otherwise the next message, if any.
      if (signals > 0) break;
    }
    // Ctrl-C (or SIGTERM) between runs ended the session.
    if (signals > 0 && code === 0) return 130;
    if (code === 0 && fallback.denied() > 0) {
      if (format === 'text') {
        writeErr(
          `agent: ${fallback.denied()} call(s) needed approval and -p could not ask (exit ${deniedWithoutApproverExitCode})\n`,
        );
      }
      return deniedWithoutApproverExitCode;
    }
    return code;
  } finally {
    keys?.stop();
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await session.close();
  }
}

/** The interactive session. */
async function replMode(options: CliOptions): Promise<number> {
  // The terminal's input for the whole session: lines typed at any time are kept.
  const prompt = new PromptInput(process.stdin, process.stdout);
  const keys = new RunKeys(prompt.keys);
  const session = await createSession(options, {
    mode: options.mode ?? 'default',
    approver: terminalApprover(keys, writeOut, {
      cwd: resolve(options.cwd),
      colour: useColour(process.stdout),
    }),
    log: (line) => writeErr(`${line}\n`),
    confirmMcpToolChanges: askMcpToolChangesOnTerminal(process.stdin, writeOut),
    planApprover: terminalPlanApprover(keys, writeOut),
    mcpInteractions: new McpInteractions({
      keys,
      write: writeOut,
      log: (line) => writeErr(`${line}\n`),
      cwd: resolve(options.cwd),
      logLevel: options.mcpLogLevel,
      tty: process.stdout.isTTY === true,
    }),
  });
  try {
    return await runRepl({
      session,
      keys,
      prompt,
      output: process.stdout,
      savePath: options.save,
      initialPrompt: options.initialPrompt,
    });
  } finally {
    keys.stop();
    prompt.close();
    await session.close();
  }
}

/** The first user message of a saved session, on one line, for the list. */
async function sessionTitle(path: string): Promise<string> {
  try {
    const messages = await loadConversation(path);
    const first = messages.find((message) => message.role === 'user');
    const content = first?.content;
    const text =
      typeof content === 'string'
        ? content
        : Array.isArray(content)
          ? content.map((part) => ('text' in part ? part.text : '')).join(' ')
          : '';
    const line = text.replace(/\s+/g, ' ').trim();
    return line.length > 60 ? `${line.slice(0, 59)}…` : line || '(empty)';
  } catch {
    return '(unreadable)';
  }
}

/** `--resume` without a file: lists the workspace's sessions (newest first) and reads a number. */
async function pickSession(cwd: string): Promise<string> {
  const found = (await listSessions(cwd)).slice(0, 20);
  if (found.length === 0) throw new CliError(`No saved session for ${resolve(cwd)} to resume`);
  const lines = await Promise.all(
    found.map(
      async (entry, index) =>
        `${String(index + 1).padStart(2)}. ${entry.modified.toISOString().slice(0, 16).replace('T', ' ')}  ${await sessionTitle(entry.path)}`,
    ),
  );
  writeErr(`Saved sessions of ${resolve(cwd)}, newest first:\n${lines.join('\n')}\n`);
  if (process.stdin.isTTY !== true)
    throw new CliError('Not a terminal, so no session can be picked: pass --resume <file>');
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    while (true) {
      const answer = (await rl.question(`Resume which (1-${found.length})? `)).trim();
      const chosen = found[Number(answer) - 1];
      if (/^\d+$/.test(answer) && chosen !== undefined) return chosen.path;
    }
  } finally {
    rl.close();
  }
}

/** Runs the CLI and returns the exit code; user errors are printed without a stack. */
export async function main(argv: readonly string[]): Promise<number> {
  let options: CliOptions;
  let retention: SessionRetention = {};
  try {
    options = parseCliArgs(argv);
    if (options.command === 'run' || options.command === 'mcp-serve') {
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
        ...(interactive ? { ask: askTrustOnTerminal(process.stdin, writeOut) } : {}),
      });
      for (const notice of start.notices) writeErr(`${notice}\n`);
      retention = start.settings.sessions;
      Object.assign(process.env, start.settings.env);
      resetRedaction();
      options = {
        ...applySettings(options, start.settings, options.sandboxExplicit === true),
        workspaceTrusted: start.trusted,
        projectRoot: start.folder,
      };
    }
    if (options.command === 'run') {
      // `--resume <id>`: the kept session with the id json output printed, written back in place.
      if (options.resume !== undefined && !existsSync(options.resume)) {
        if (!isSessionId(options.resume))
          throw new CliError(
            `--resume ${options.resume}: no such file (and not a session id; the json output's "sessionId" is one)`,
          );
        const path = await findSessionById(options.resume);
        if (path === undefined)
          throw new CliError(
            `--resume ${options.resume}: no session with this id is kept under ${join(agentHome(), 'sessions')} (sessions saved with --save elsewhere are resumed by their file)`,
          );
        options = { ...options, resume: path, save: options.save ?? path };
      }
      // Old session files go (the retention of the user settings); the one resumed stays.
      await pruneSessions(retention, {
        keep: [options.resume, options.save].filter((path) => path !== undefined),
      }).catch(() => 0);
      await pruneCheckpoints(retention.keepDays ?? defaultSessionKeepDays).catch(() => 0);
      // Every session is kept (unless --save names the file); --continue picks up the newest.
      if (options.pickSession === true) {
        const path = await pickSession(options.cwd);
        options = { ...options, resume: path, save: options.save ?? path };
      }
      if (options.continueLast === true) {
        const [last] = await listSessions(options.cwd);
        if (last === undefined)
          throw new CliError(`No saved session for ${resolve(options.cwd)} to continue`);
        options = { ...options, resume: last.path, save: options.save ?? last.path };
      }
      // A resumed session keeps its id (so `--resume <id>` finds it again); a new one gets one.
      const resumedId =
        options.resume === undefined
          ? undefined
          : (await loadSavedSession(options.resume)).sessionId;
      options = { ...options, sessionId: resumedId ?? randomUUID() };
      if (options.save === undefined) {
        try {
          options = { ...options, save: await newSessionPath(options.cwd, options.sessionId) };
        } catch {
          // No writable $AGENT_HOME: the session is simply not kept.
        }
      }
    }
    switch (options.command) {
      case 'help':
        writeOut(usage);
        return 0;
      case 'version':
        writeOut(versionsText);
        return 0;
      case 'demo':
        return exitCodeFor((await runDemo(writeOut)).stopReason);
      case 'trust':
        return await runTrustCommand(options, writeOut);
      case 'mcp-serve': {
        // Loaded only for this command: the MCP server side stays out of every other start-up.
        const { runMcpServe } = await import('./mcp-serve.js');
        return await runMcpServe(options, (line) => writeErr(`${line}\n`));
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
      // The error alone, so it does not scroll away under the whole help text.
      writeErr(`agent: ${error.message}\nRun agent --help for the options and examples.\n`);
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
    if (process.listenerCount(signal) === 1) process.exit(code);
  });
}

const code = await main(process.argv.slice(2));
// Exit explicitly: a provider's keep-alive socket or a stdin handle must not keep a finished CLI alive.
process.exit(code);
