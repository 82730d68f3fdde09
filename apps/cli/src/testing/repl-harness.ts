// Test-only: the REPL of the built CLI in a tmux pane, on a script, for the long-session tests
// (compaction, rewind, plan mode). Not part of the CLI.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { cleanEnv, cliPath, TmuxSession, tempDir } from './test-support.js';

/** What a test started and must stop: `dispose()` in `afterEach`. */
export class Harness {
  readonly #sessions: TmuxSession[] = [];
  readonly #cleanups: (() => Promise<void>)[] = [];

  /** A fresh folder with a `ws` workspace inside (removed by `dispose`). */
  async folder(prefix: string): Promise<{ dir: string; workspace: string }> {
    const dir = await tempDir(prefix);
    this.#cleanups.push(dir.dispose);
    const workspace = join(dir.path, 'ws');
    await mkdir(workspace);
    return { dir: dir.path, workspace };
  }

  /**
   * Starts `agent --scripted <script> --cwd <workspace> …args` in a tmux pane; `script` is the
   * file's JSON (`{ steps, contextWindow? }`), written as `<name>.json` in `dir`.
   */
  async start(options: {
    dir: string;
    workspace: string;
    script: { steps: unknown[]; contextWindow?: number };
    args?: string[];
    name?: string;
    env?: Record<string, string>;
  }) {
    const script = join(options.dir, `${options.name ?? 'script'}.json`);
    await writeFile(script, JSON.stringify(options.script));
    const tmux = TmuxSession.start(
      [
        process.execPath,
        cliPath,
        '--scripted',
        script,
        '--cwd',
        options.workspace,
        ...(options.args ?? []),
      ],
      { cwd: options.dir, env: options.env ?? cleanEnv() },
    );
    this.#sessions.push(tmux);
    const screen = () => tmux.capture();
    return {
      tmux,
      screen,
      /** Waits until the screen shows `text` (`count` times). */
      waitForText: (text: string, count = 1) => tmux.waitForText(text, count),
      /** Waits for the idle prompt (`>` on the last line), shown `count` times in all. */
      waitForPrompt: (count = 1) => tmux.waitForPrompt(count),
      submit: (text: string) => {
        tmux.type(text);
        tmux.press('Enter');
      },
      waitForExit: () => tmux.waitForExit(),
    };
  }

  async dispose(): Promise<void> {
    for (const session of this.#sessions.splice(0)) session.kill();
    for (const cleanup of this.#cleanups.splice(0)) await cleanup();
  }
}
