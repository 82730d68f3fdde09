import { accessSync, constants } from 'node:fs';
import path from 'node:path';
import {
  type AnyAgentTool,
  defineTool,
  type ToolContext,
  ToolError,
  type ToolResult,
} from '@agent/core';
import * as z from 'zod';
import {
  type CommandWrapper,
  type ReplLanguage,
  ReplResetError,
  ReplSession,
} from './repl-session.js';

/** Options of {@link createReplTools}. */
export interface ReplToolsOptions {
  /** Working directory of the interpreters. */
  cwd: string;
  /** Run the interpreters inside this sandbox (e.g. the session's `@agent/sandbox`, as bash does). */
  sandbox?: CommandWrapper;
  /** Languages to offer [javascript, and python when `python3` is on PATH]. */
  languages?: readonly ReplLanguage[];
  /** Default per-cell time limit [30 s]; a call may ask for up to `maxTimeoutMs`. */
  timeoutMs?: number;
  /** Largest time limit a call may ask for [10 min]. */
  maxTimeoutMs?: number;
  /** Characters kept of each of a cell's value, stdout and stderr (head and tail) [20,000]. */
  maxOutputChars?: number;
  /** The Python interpreter [python3]. */
  python?: string;
  /**
   * Environment of the interpreters [process.env], without the variables that hold credentials
   * (`credentialFreeEnvironment` of `@agent/core`) unless `passEnv` names them.
   */
  env?: NodeJS.ProcessEnv;
  /** Names of credential variables the interpreters get anyway (exact names) [none]. */
  passEnv?: readonly string[];
  /**
   * One `repl` tool `{ code, language, timeout_ms?, reset? }` (alias `REPL`, claw-code's shape)
   * over the same sessions, instead of one tool per language [false].
   */
  combined?: boolean;
}

/** The REPL tools and their sessions. */
export interface ReplTools {
  tools: AnyAgentTool[];
  /** The main agent's sessions, one per language (each sub-agent run gets interpreters of its own). */
  sessions: ReplSession[];
  /** Stops every interpreter. */
  close(): Promise<void>;
}

const toolNames: Record<ReplLanguage, string> = { javascript: 'js_repl', python: 'python_repl' };
const languageLabels: Record<ReplLanguage, string> = {
  javascript: 'JavaScript (Node.js)',
  python: 'Python 3',
};
/** The names claw-code accepts for each language (lower case). */
const languageNames: Record<string, ReplLanguage> = {
  javascript: 'javascript',
  js: 'javascript',
  node: 'javascript',
  python: 'python',
  py: 'python',
  python3: 'python',
};
const awaitNote =
  ' In a JavaScript cell that uses top-level await, declarations stay local to the cell (assign to globalThis to keep a value).';

/** Whether an executable is on PATH (or is a path that exists). */
export function findExecutable(
  name: string,
  env: NodeJS.ProcessEnv = process.env,
): string | undefined {
  const candidates = name.includes('/')
    ? [name]
    : (env.PATH ?? '')
        .split(path.delimiter)
        .filter(Boolean)
        .map((dir) => path.join(dir, name));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  return undefined;
}

function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  const half = Math.floor(max / 2);
  return `${text.slice(0, half)}\n[… ${text.length - max} characters cut …]\n${text.slice(-half)}`;
}

/** Interpreters of sub-agent runs kept (the most recently used, all languages together); older ones are closed. */
const maxSubAgentSessions = 4;

/**
 * Persistent REPL tools: `js_repl` (a Node process with a `vm` context: variables and functions
 * persist between calls, `require` works, top-level `await` works in a cell) and `python_repl`
 * (python3: one globals dict). Each call runs a cell and returns what it printed and the value of
 * its last expression. A cell past its time limit, an aborted call or an interpreter that exits
 * resets the session (the result says its state is gone). Full-access tools: the code can do
 * anything the process can, so they are asked unless a rule allows them — and, given a sandbox,
 * they run confined like bash.
 */
export function createReplTools(options: ReplToolsOptions): ReplTools {
  const python = options.python ?? 'python3';
  const languages =
    options.languages ??
    (['javascript', ...(findExecutable(python) === undefined ? [] : ['python'])] as ReplLanguage[]);
  const defaultTimeoutMs = options.timeoutMs ?? 30_000;
  const maxTimeoutMs = options.maxTimeoutMs ?? 600_000;
  const maxChars = options.maxOutputChars ?? 20_000;
  const newSession = (language: ReplLanguage) =>
    new ReplSession({
      language,
      cwd: options.cwd,
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
      ...(language === 'python' ? { executable: python } : {}),
      ...(options.env === undefined ? {} : { env: options.env }),
      ...(options.passEnv === undefined ? {} : { passEnv: options.passEnv }),
    });
  const sessions = languages.map(newSession);
  // A sub-agent's run gets interpreters of its own: sharing the parent's let it read the
  // variables the parent computed (data the parent never put in its task) and change the
  // functions the parent's next cells call. Kept per run, the latest few.
  const runSessions = new Map<string, ReplSession>();
  const sessionFor = (root: ReplSession, ctx: ToolContext): ReplSession => {
    const run = ctx.run;
    if (run === undefined || run.depth === 0) return root;
    const key = `${root.language}\0${run.runId}`;
    let session = runSessions.get(key);
    if (session === undefined) {
      session = newSession(root.language);
      runSessions.set(key, session);
      for (const [oldKey, old] of runSessions) {
        if (runSessions.size <= maxSubAgentSessions) break;
        runSessions.delete(oldKey);
        void old.close();
      }
    } else {
      // The most recently used stay.
      runSessions.delete(key);
      runSessions.set(key, session);
    }
    return session;
  };
  const timeoutInput = z
    .number()
    .int()
    .min(1)
    .max(maxTimeoutMs)
    .optional()
    .describe(`Time limit of this cell in ms [${defaultTimeoutMs}].`);
  const codeInput = z
    .string()
    .refine((code) => code.trim() !== '', { error: 'code must not be empty' });
  const resetInput = z
    .boolean()
    .optional()
    .describe('Start a fresh session (all state cleared) before running the code.');

  // After the shared schemas above: the tool builders read them.
  const tools =
    options.combined === true ? [combinedTool()] : sessions.map((session) => replTool(session));

  function replTool(session: ReplSession): AnyAgentTool {
    const name = toolNames[session.language];
    const language = languageLabels[session.language];
    return defineTool({
      name,
      description:
        `Runs ${language} code in a persistent session: variables, functions and imports stay ` +
        'defined for later calls. Returns what the code printed and the value of its last ' +
        `expression. A cell is stopped after ${defaultTimeoutMs / 1000} s (timeout_ms to change), ` +
        'which resets the session.' +
        (session.language === 'javascript' ? awaitNote : '') +
        ' Use it for calculations, data processing and trying code; use bash for shell commands.',
      input: z.object({
        code: codeInput.describe(`${language} code to run.`),
        timeout_ms: timeoutInput,
        reset: resetInput,
      }),
      // Rules see the code, and only exact code: a pattern cannot bound what code does.
      policy: { permission: 'full-access', subjectsAreCode: true },
      permissionSubjects: ({ code }) => [code],
      execute: (args, ctx) => runCell(session, name, args, ctx),
    });
  }

  /** One tool for every offered language: claw-code's `REPL {code, language, timeout_ms}`. */
  function combinedTool(): AnyAgentTool {
    const name = 'repl';
    const offered = sessions.map((session) => session.language);
    const byLanguage = new Map(sessions.map((session) => [session.language, session]));
    return defineTool({
      name,
      aliases: ['REPL'],
      description:
        `Runs code in a persistent session per language (${offered.map((language) => languageLabels[language]).join(', ')}): ` +
        'variables, functions and imports stay defined for later calls of the same language. ' +
        'Returns what the code printed and the value of its last expression. A cell is stopped ' +
        `after ${defaultTimeoutMs / 1000} s (timeout_ms to change), which resets that session.` +
        (byLanguage.has('javascript') ? awaitNote : '') +
        ' Use it for calculations, data processing and trying code; use bash for shell commands.',
      prepareArguments: (raw) => {
        if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
        const language = (raw as { language?: unknown }).language;
        if (typeof language !== 'string') return raw;
        const key = language.trim().toLowerCase();
        const known = Object.hasOwn(languageNames, key) ? languageNames[key] : undefined;
        return known === undefined ? raw : { ...raw, language: known };
      },
      input: z.object({
        code: codeInput.describe('The code to run.'),
        language: z
          .string()
          .min(1)
          .describe(`One of: ${offered.join(', ')}.`)
          .refine((language) => byLanguage.has(language as ReplLanguage), {
            error: (issue) =>
              `unsupported REPL language: ${String(issue.input)} (offered: ${offered.join(', ')})`,
          }),
        timeout_ms: timeoutInput,
        reset: resetInput,
      }),
      // Rules see the code, and only exact code: a pattern cannot bound what code does.
      policy: { permission: 'full-access', subjectsAreCode: true },
      // The language is part of the subject: a rule may allow Python and not JavaScript.
      permissionSubjects: ({ code, language }) => [`${language}: ${code}`],
      execute: ({ language, ...args }, ctx) => {
        const session = byLanguage.get(language as ReplLanguage);
        if (session === undefined)
          throw ToolError.invalidArguments(name, `unsupported REPL language: ${language}`);
        return runCell(session, name, args, ctx);
      },
    });
  }

  async function runCell(
    rootSession: ReplSession,
    name: string,
    {
      code,
      timeout_ms,
      reset,
    }: { code: string; timeout_ms?: number | undefined; reset?: boolean | undefined },
    ctx: ToolContext,
  ): Promise<ToolResult> {
    const session = sessionFor(rootSession, ctx);
    if (reset === true) session.reset();
    try {
      const outcome = await session.run(code, {
        timeoutMs: timeout_ms ?? defaultTimeoutMs,
        signal: ctx.signal,
      });
      const parts: string[] = [];
      if (outcome.started) parts.push(`[new ${session.language} session]`);
      if (outcome.stdout !== '') parts.push(clip(outcome.stdout.replace(/\n$/, ''), maxChars));
      if (outcome.stderr !== '')
        parts.push(`[stderr]\n${clip(outcome.stderr.replace(/\n$/, ''), maxChars)}`);
      if (!outcome.ok) parts.push(clip(outcome.error ?? 'The cell failed', maxChars));
      else if (outcome.value !== undefined) parts.push(`=> ${clip(outcome.value, maxChars)}`);
      if (parts.length === 0 || (parts.length === 1 && outcome.started)) parts.push('(no output)');
      return {
        content: [{ type: 'text', text: parts.join('\n') }],
        ...(outcome.ok ? {} : { isError: true }),
        details: { ok: outcome.ok, started: outcome.started, language: session.language },
      };
    } catch (error) {
      if (error instanceof ReplResetError) {
        throw new ToolError(`${name}: ${error.message}`, {
          kind: ctx.signal.aborted
            ? 'cancelled'
            : /did not finish/.test(error.message)
              ? 'timeout'
              : 'failed',
          toolName: name,
        });
      }
      throw new ToolError(`${name}: ${(error as Error).message}`, {
        kind: 'failed',
        toolName: name,
      });
    }
  }

  return {
    tools,
    sessions,
    close: async () => {
      const all = [...sessions, ...runSessions.values()];
      runSessions.clear();
      await Promise.all(all.map((session) => session.close()));
    },
  };
}
