// Test-only helpers: the built CLI as a real child process, and a real terminal (tmux) around it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { anyUserDirectory, copyForAnyUser } from '@agent/tooling-system-tools';
import { expect, vi } from 'vitest';
import { absolutePathEntries } from '../config/absolute-path.js';

/** The package directory (apps/cli). */
export const appDir = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
/** The built CLI. */
export const cliPath = join(appDir, 'dist', 'main.js');

let anyUserCli: string | undefined;

/**
 * The built CLI (one self-contained folder) copied where every user can read it — a clone in a
 * 0700 folder or under /root is not — for runs as another user (`setpriv --reuid=65534 …`). One
 * copy per test process, removed when it exits.
 */
export function cliPathForAnyUser(): string {
  if (anyUserCli === undefined) {
    assertBuilt();
    const dir = anyUserDirectory('agent-cli-dist-');
    process.once('exit', () => dir.dispose());
    anyUserCli = join(copyForAnyUser(join(appDir, 'dist'), dir.path), 'main.js');
  }
  return anyUserCli;
}

/** Fails with a clear message when the CLI was not built (turbo builds it before `test`). */
export function assertBuilt(): void {
  if (!existsSync(cliPath))
    throw new Error(`${cliPath} is missing: run \`pnpm turbo run build --filter=@agent/cli...\``);
}

/**
 * The AGENT_HOME of this test process's CLI runs: never the real ~/.agent, and not shared with
 * other test files either (one shared home let an MCP server's tools pinned by one file leave out
 * another file's same-named server's tools). Removed when the process exits.
 */
const testHome = join(tmpdir(), `agent-cli-test-home-${process.pid}`);
process.once('exit', () => rmSync(testHome, { recursive: true, force: true }));

/** The environment without any provider key, so tests never reach a real API. */
export function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value === undefined) continue;
    if (/API_KEY$|_BASE_URL$/.test(key)) continue;
    env[key] = value;
  }
  // pnpm runs the tests with a relative `./node_modules/.bin` on PATH, which the CLI leaves out
  // with a notice (config/absolute-path.ts): a user's PATH is absolute.
  if (env.PATH !== undefined) env.PATH = absolutePathEntries(env.PATH).path;
  // The tests expect the CLI's glyphs: a terminal under LANG=C gets them in ASCII
  // (ui/terminal-charset.ts), so a runner without a UTF-8 locale gives its CLIs one.
  if (!/utf-?8/i.test(env.LC_ALL || env.LC_CTYPE || env.LANG || 'UTF-8')) {
    delete env.LC_ALL;
    delete env.LC_CTYPE;
    env.LANG = 'C.UTF-8';
  }
  return { ...env, NO_COLOR: '1', AGENT_HOME: testHome, ...extra };
}

/** The outcome of one CLI process. */
export interface CliRun {
  /** The exit code; null when a signal ended the process (then `signal` names it). */
  code: number | null;
  signal?: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * The users a test that matters for both runs as: as root, root and nobody (65534, through
 * `runCli`'s `uid`); otherwise this user alone.
 */
export const testUsers: readonly { label: string; uid: number | undefined }[] =
  process.getuid?.() === 0
    ? [
        { label: 'root', uid: undefined },
        { label: 'nobody', uid: 65534 },
      ]
    : [{ label: `uid ${process.getuid?.()}`, uid: undefined }];

/**
 * Runs the built CLI with stdin closed, or piped `input` (never a TTY), and waits for it to exit.
 * `node` (with `nodeArgs` before the script) instead of this test's; with `uid`, as that user
 * (setpriv, which executes the CLI with the same pid) from a copy of the CLI every user reads.
 */
export function runCli(
  args: readonly string[],
  options: {
    cwd?: string;
    env?: Record<string, string>;
    input?: string;
    cliPath?: string;
    node?: string;
    nodeArgs?: readonly string[];
    uid?: number | undefined;
  } = {},
): Promise<CliRun> {
  const { uid } = options;
  const script = options.cliPath ?? (uid === undefined ? cliPath : cliPathForAnyUser());
  const command = [options.node ?? process.execPath, ...(options.nodeArgs ?? []), script, ...args];
  return new Promise((resolve, reject) => {
    const asUser = [`--reuid=${uid}`, `--regid=${uid}`, '--clear-groups'];
    const [file, ...rest] = uid === undefined ? command : ['setpriv', ...asUser, ...command];
    const child = spawn(file ?? '', rest, {
      cwd: options.cwd ?? appDir,
      env: options.env ?? cleanEnv(),
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    if (options.input !== undefined) child.stdin?.end(options.input);
    if (child.stdout === null || child.stderr === null) throw new Error('no pipes');
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
      stdout += chunk;
    });
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => {
      // A signal nobody in the test sent (the OOM killer, a crash) shows only as `code: null`
      // in an assertion: the test's log says which signal, and what the CLI printed first.
      if (signal !== null) {
        process.stderr.write(
          `runCli ${args.join(' ')}: ended by ${signal}; its stderr:\n${stderr.slice(-2000)}\n`,
        );
      }
      resolve({ code, signal, stdout, stderr });
    });
  });
}

/** A temp directory removed by `dispose`. */
export async function tempDir(prefix: string): Promise<{ path: string; dispose(): Promise<void> }> {
  const path = await mkdtemp(join(tmpdir(), prefix));
  // Retried: a CLI just killed (tmux) may still be writing its compile cache under the directory.
  return {
    path,
    dispose: () => rm(path, { recursive: true, force: true, maxRetries: 10, retryDelay: 100 }),
  };
}

/** Writes a script file for `--scripted`. */
export async function writeScript(
  dir: string,
  steps: unknown[],
  name = 'script.json',
): Promise<string> {
  const path = join(dir, name);
  await writeFile(path, JSON.stringify({ steps }));
  return path;
}

/** The built CLI's command line (argv) with a scripted model answering `text` after `delayMs`, in `dir`. */
export async function slowAnswerCommand(
  dir: string,
  text: string,
  delayMs: number,
): Promise<string[]> {
  const script = await writeScript(dir, [{ text, delayMs }]);
  return [process.execPath, cliPath, '--scripted', script, '--cwd', dir];
}

/**
 * The body of an OpenAI-compatible server's streamed answer (`text/event-stream`): one chunk
 * saying `text`, then `[DONE]` — what a fake Ollama or proxy of a test answers.
 */
export function chatCompletionStream(text: string): string {
  const chunk = {
    id: 'c',
    object: 'chat.completion.chunk',
    created: 1,
    model: 'm',
    choices: [{ index: 0, delta: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  };
  return `data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`;
}

let socketCounter = 0;

/**
 * How long a test waits for a terminal to show something. A wait ends as soon as the text is
 * there; the limit only decides how late a failure is reported. Under CI every package's suite
 * runs at once on 2 cores (load 15–30), and a REPL that answers in 5 s alone once took past 20 s.
 */
export const screenWaitMs = process.env.CI === 'true' ? 60_000 : 20_000;

/** `vi.waitFor`'s options for a terminal: {@link screenWaitMs}, polled every 50 ms. */
export const screenWaitOptions = { timeout: screenWaitMs, interval: 50 };

function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`;
}

/** A tmux server on its own socket running one command in a 200×50 pane. */
export class TmuxSession {
  readonly socket: string;

  readonly #statusFile: string;
  #socketPath = '';

  private constructor(socket: string, statusFile: string) {
    this.socket = socket;
    this.#statusFile = statusFile;
  }

  /**
   * Starts `command` (argv) in a new detached session, through `sh`, which writes the exit status
   * to `<cwd>/.exit-status` (tmux's own `pane_dead_status` is sometimes never filled in); the
   * terminal is `columns` wide [200].
   */
  static start(
    command: readonly string[],
    options: { cwd: string; env: Record<string, string>; columns?: number },
  ): TmuxSession {
    socketCounter += 1;
    const statusFile = join(options.cwd, '.exit-status');
    const session = new TmuxSession(`agent-cli-test-${process.pid}-${socketCounter}`, statusFile);
    const shell = `${command.map(quote).join(' ')}; echo $? > ${quote(statusFile)}`;
    session.#tmux(
      [
        '-f',
        '/dev/null',
        'new-session',
        '-d',
        '-s',
        'main',
        '-x',
        String(options.columns ?? 200),
        '-y',
        '50',
        shell,
        ';',
        'set-option',
        '-t',
        'main',
        'remain-on-exit',
        'on',
      ],
      options,
    );
    session.#socketPath = session.#tmux(['display-message', '-p', '#{socket_path}']).trim();
    return session;
  }

  /** The pane's text, scrollback included. */
  capture(): string {
    return this.#tmux(['capture-pane', '-p', '-J', '-t', 'main', '-S', '-500']);
  }

  /**
   * Waits until the screen (scrollback included) shows `text` at least `count` times. A timeout
   * says what was awaited and shows the screen as it was last seen.
   */
  waitForText(text: string, count = 1): Promise<void> {
    return this.waitForScreen((shown) => {
      expect(
        shown.split(text).length - 1,
        `waiting for ${JSON.stringify(text)} ×${count}; the screen:\n${shown}`,
      ).toBeGreaterThanOrEqual(count);
    });
  }

  /** Waits for the REPL's idle prompt: `>` alone on the last line, and `count` prompt lines in all. */
  waitForPrompt(count = 1): Promise<void> {
    return this.waitForScreen((shown) => {
      const lines = shown
        .split('\n')
        .map((line) => line.trimEnd())
        .filter((line) => line !== '');
      const prompts = lines.filter((line) => line.startsWith('>')).length;
      expect(
        lines.at(-1) === '>' && prompts >= count,
        `waiting for the prompt ×${count}; the screen:\n${shown}`,
      ).toBe(true);
    });
  }

  /** Waits until the command has ended; its exit status. */
  waitForExit(): Promise<number> {
    return vi.waitFor(() => {
      const status = this.exitStatus();
      if (status === undefined) throw new Error(`still running; the screen:\n${this.capture()}`);
      return status;
    }, screenWaitOptions);
  }

  /** Waits until `check` passes on the screen (it throws until then); returns what it returns. */
  waitForScreen<T>(check: (screen: string) => T): Promise<T> {
    return vi.waitFor(() => check(this.capture()), screenWaitOptions);
  }

  /** Types literal text (no Enter). */
  type(text: string): void {
    this.#tmux(['send-keys', '-t', 'main', '-l', text]);
  }

  /** Presses keys by tmux name (`Enter`, `C-c`, `C-d`). */
  press(...keys: string[]): void {
    this.#tmux(['send-keys', '-t', 'main', ...keys]);
  }

  /** Sends bytes as a terminal would (hex, `e9`): a key of a terminal that is not UTF-8. */
  sendBytes(...hex: string[]): void {
    this.#tmux(['send-keys', '-t', 'main', '-H', ...hex]);
  }

  /** `undefined` while the command runs, else its exit status. */
  exitStatus(): number | undefined {
    let text: string;
    try {
      text = readFileSync(this.#statusFile, 'utf8');
    } catch {
      return undefined;
    }
    return text.endsWith('\n') ? Number(text.trim()) : undefined;
  }

  /** Kills the tmux server (and the command with it). */
  kill(): void {
    spawnSync('tmux', ['-L', this.socket, 'kill-server'], { stdio: 'ignore' });
    // tmux leaves its socket file behind.
    if (this.#socketPath !== '') rmSync(this.#socketPath, { force: true });
  }

  #tmux(
    args: readonly string[],
    options: { cwd?: string; env?: Record<string, string> } = {},
  ): string {
    const result = spawnSync('tmux', ['-L', this.socket, ...args], {
      encoding: 'utf8',
      ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
      ...(options.env === undefined ? {} : { env: options.env }),
    });
    if (result.status !== 0) throw new Error(`tmux ${args.join(' ')} failed: ${result.stderr}`);
    return result.stdout;
  }
}

/** `value` as one word of a shell line: a path under a TMPDIR with a space in it stays one path. */
export function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}
