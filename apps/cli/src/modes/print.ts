// `agent -p`: one prompt (with piped stdin), or `--input-format stream-json` lines, run without a
// terminal; text, json or stream-json out.
import { resolve } from 'node:path';
import {
  type AgentEvent,
  type ApprovalDecision,
  messageText,
  type PermissionApprover,
  terminalSafe,
} from '@agent/core';
import { type CliOptions, UsageError } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import { jsonProblem } from '../config/project-file.js';
import { projectRootNotice, wideWorkspaceNotice } from '../config/project-root.js';
import {
  createSession,
  deniedWithoutApproverExitCode,
  exitCodeFor,
  nonInteractiveApprover,
  runPrompt,
} from '../session/session.js';
import { withheldNotice } from '../session/tool-sources.js';
import { heldWhileAsking } from '../ui/held-output.js';
import { jsonLine } from '../ui/json-line.js';
import { McpInteractions } from '../ui/mcp-interactions.js';
import { canRedraw, noticeText, useColour, writeErr, writeNotice, writeOut } from '../ui/output.js';
import { RunKeys, terminalApprover } from '../ui/terminal-keys.js';
import { Transcript } from '../ui/transcript.js';
import { waitIndicator } from '../ui/wait-spinner.js';
import { partialAnswer, partialAnswerNote, type RunStop } from './partial-answer.js';
import { boundedLines, readStdin, stdinLimitBytes } from './piped-stdin.js';
import {
  createStreamJsonMapper,
  permissionAsked,
  runSummary,
  type StreamJsonEvent,
  streamJsonInputSchema,
} from './stream-json.js';

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
  const bounded = boundedLines(process.stdin);
  const lines = createInterface({ input: bounded.lines, crlfDelay: Number.POSITIVE_INFINITY });
  // A signal between runs ends the session: no more lines are read.
  stop.addEventListener('abort', () => lines.close(), { once: true });
  let number = 0;
  for await (const line of lines) {
    if (stop.aborted) return;
    // The start of the line too long to take, given by readline as the last.
    if (bounded.overflowed() && number >= bounded.completeLines()) break;
    number += 1;
    if (line.trim() === '') continue;
    yield inputMessage(line, number);
  }
  if (bounded.overflowed())
    throw new UsageError(
      `stdin line ${number + 1} is longer than ${stdinLimitBytes / 1024 / 1024} MiB, more than a model reads in one message (it was not sent; the lines before it were): send the part that matters, or name a file in the message and let the agent read it`,
    );
}

/** The text of one `--input-format stream-json` line; a line that is not a user message is an error. */
function inputMessage(line: string, number: number): string {
  let data: unknown;
  try {
    data = JSON.parse(line);
  } catch (error) {
    // Where and why, without quoting the line (V8's message quotes a piece of it: the user's
    // message, a key pasted in it, went to stderr and the CI log).
    const described = jsonProblem(error, line);
    const lead = 'it is not valid JSON (';
    const place = described.startsWith(lead)
      ? ` (${described.slice(lead.length).replace(/^line 1, /, '')}`
      : '';
    throw new CliError(
      `stdin line ${number} is not JSON${place}: each line is one {"type":"user","message":{"role":"user","content":"…"}}`,
    );
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

/**
 * One `-p` run. Text: the transcript goes to stderr, the final answer to stdout. json: one object
 * on stdout at the end. stream-json: one JSON object per line on stdout for every event.
 */
export async function printMode(options: CliOptions, resumeOnly = false): Promise<number> {
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
  const emit = (event: StreamJsonEvent) => writeOut(`${jsonLine(event)}\n`);
  const toStreamJson = createStreamJsonMapper();
  const interactive = process.stdin.isTTY === true;
  const keys = interactive ? new RunKeys(process.stdin) : undefined;
  const fallback = nonInteractiveApprover();
  const colour = useColour(process.stderr);
  const approver =
    keys === undefined
      ? fallback
      : terminalApprover(keys, writeErr, {
          cwd: resolve(options.cwd),
          colour,
          terminal: process.stderr,
        });
  // A notice that comes while a question waits is written once it is answered (held-output.ts).
  const heldNotice = heldWhileAsking(writeErr, () => keys?.waiting === true);
  const log = (line: string) => heldNotice(noticeText(line));
  const session = await createSession(options, {
    mode: options.mode ?? 'read-only',
    approver: format === 'stream-json' ? reportingApprover(approver, emit) : approver,
    // Plan mode in -p: the plan is the answer (on stdout as text; in the JSON formats, the call's arguments).
    ...(format === 'text'
      ? {
          printPlan: (plan: string) => {
            const shown = process.stdout.isTTY === true ? terminalSafe(plan) : plan;
            writeOut(shown.endsWith('\n') ? shown : `${shown}\n`);
          },
        }
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
      ...(session.hooksSandbox === undefined ? {} : { hooksSandbox: session.hooksSandbox }),
      tools: session.tools.tools.map((tool) => tool.name),
    });
  } else if (format === 'text') {
    // Each line names folders, whose names a repository chooses: shown, never obeyed.
    const startLine = (text: string) => writeErr(`${terminalSafe(text, { singleLine: true })}\n`);
    startLine(`bash: ${session.tools.sandbox.describe()}`);
    const withheld = withheldNotice(session.tools.withheld);
    if (withheld !== undefined) startLine(withheld);
    if (session.hooksSandbox !== undefined) startLine(`hooks: ${session.hooksSandbox}`);
    const project = projectRootNotice(session);
    if (project !== undefined) startLine(project);
    const wide = wideWorkspaceNotice(session.cwd);
    if (wide !== undefined) startLine(wide);
  }
  let abort: (() => void) | undefined;
  let signals = 0;
  let stoppedBy: NodeJS.Signals | undefined;
  const onSignal = (signal: NodeJS.Signals) => {
    signals += 1;
    stoppedBy ??= signal;
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
            // Whatever stdin is (a script's /dev/null, a pipe): the wait is shown where the
            // user looks, on a terminal's stderr, and never reaches stdout.
            ...(canRedraw(process.stderr)
              ? {
                  spinner: {
                    paused: () => keys?.waiting === true,
                    columns: () => process.stderr.columns,
                  },
                }
              : {}),
            questionOpen: () => keys?.waiting === true,
          })
        : jsonFormatWatcher((event: AgentEvent) => {
            if (format === 'stream-json') for (const line of toStreamJson(event)) emit(line);
          }, keys);
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
          // Ctrl-C read as a key (stdin a terminal, raw mode) is the same as SIGINT.
          keys?.start(() => onSignal('SIGINT'));
        },
        onNotice: writeNotice,
        savePath: options.save,
      });
      keys?.stop();
      abort = undefined;
      // A UserPromptSubmit hook blocked the prompt (the notice said why).
      if (result === undefined) code = 1;
      else {
        const summary = runSummary(sessionId, result, fallback.denied() - deniedBefore);
        if (format === 'json') writeOut(`${jsonLine(summary)}\n`);
        else if (format === 'stream-json') emit({ ...summary, type: 'run-end' });
        else if (result.stopReason === 'completed' || result.stopReason === 'terminated')
          await writeAnswer(
            result.finalMessage === undefined ? '' : messageText(result.finalMessage),
          );
        else if (process.stdout.errored === null) {
          // Cut off (a signal, an error mid-answer): what the model wrote is still the answer
          // so far, and a line on stderr says it is partial. Not when stdout itself failed.
          const partial = partialAnswer(result);
          if (partial !== undefined) await writeAnswer(partial);
          const stop: RunStop | undefined =
            result.stopReason === 'aborted' && stoppedBy !== undefined
              ? { kind: 'signal', signal: stoppedBy }
              : result.stopReason === 'error' && partial !== undefined
                ? { kind: 'error' }
                : undefined;
          if (stop !== undefined) writeErr(`${partialAnswerNote(stop, partial !== undefined)}\n`);
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

/** The answer on stdout: shown, not obeyed, on a terminal (rendered with colours); a pipe gets it as written. */
async function writeAnswer(text: string): Promise<void> {
  let answer = process.stdout.isTTY === true ? terminalSafe(text) : text;
  // Markdown is rendered on a terminal with colours (loaded only then).
  if (answer !== '' && useColour(process.stdout)) {
    const { createMarkdownRenderer } = await import('../ui/markdown.js');
    answer = createMarkdownRenderer(process.stdout.columns ?? 80)(answer);
  }
  if (answer !== '') writeOut(answer.endsWith('\n') ? answer : `${answer}\n`);
}

/**
 * The events of a JSON output format: its lines on stdout, and, when stderr is a terminal, the
 * wait indicator there (the model's wait, running tools) — nothing else on stderr, nothing of it
 * on stdout.
 */
function jsonFormatWatcher(
  emitLines: (event: AgentEvent) => void,
  keys: RunKeys | undefined,
): { onEvent: (event: AgentEvent) => void } {
  if (!canRedraw(process.stderr)) return { onEvent: emitLines };
  const wait = waitIndicator({
    write: writeErr,
    paused: () => keys?.waiting === true,
    columns: () => process.stderr.columns,
  });
  return {
    onEvent: (event) => {
      wait.onEvent(event);
      emitLines(event);
    },
  };
}
