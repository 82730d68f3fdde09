/**
 * The user's side of workspace trust: the question the REPL asks before anything of a folder
 * runs, and `agent trust [list|revoke]`.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import type { ReadStream } from 'node:tty';
import { terminalSafe } from '@agent/core';
import { isWholesaleFolder, realFolder, TrustStore } from '@agent/workspace-trust';
import { agentHome } from '../config/agent-home.js';
import type { CliOptions } from '../config/args.js';
import { CliError } from '../config/cli-error.js';
import type { McpToolChangeQuestion } from '../config/mcp-pins.js';
import { findProjectRoot } from '../config/project-root.js';
import { startWithTrust, type TrustQuestion, trustStorePath } from '../config/trust-flow.js';
import { lookAlikeWarning } from '../ui/look-alikes.js';
import { droppedKeysNote, questionSettleMs, tallerThan, tallNote } from '../ui/terminal-keys.js';

/** The answer keys of the trust question (drawn once it has been on screen a moment). */
export const trustAnswerKeys = '[y] yes [n] no (start without it) ';

/** The question's text, every line that would run or widen shown (the answer keys come after). */
export function trustQuestionText(question: TrustQuestion): string {
  // A folder's name may hold a newline or an escape sequence (a repository's name, a subfolder).
  const folder = terminalSafe(question.folder, { singleLine: true });
  const head = question.changed
    ? `The configuration of ${folder} changed since you trusted it. Trusting it again lets this run:`
    : `${folder} has configuration that runs commands or widens what the agent may do:`;
  const scope = question.wholesale
    ? '(This is your home directory or the root: only this folder itself is trusted, not the folders below it.)\n'
    : '';
  const lines = question.lines.map((line) => `  ${line}`).join('\n');
  // A hook `сurl …` (Cyrillic с), a server URL on `gіthub.com`: named before the question.
  return `${head}\n${lines}\n${scope}${lookAlikeWarning(lines)}Trust this folder? `;
}

/**
 * Reads and drops what the terminal holds that no one has read yet — keys typed ahead, a line
 * being typed (raw mode makes it readable) — through a second, non-blocking descriptor of the
 * controlling terminal (the terminal's one input queue). Nothing when there is no /dev/tty.
 */
function discardPendingInput(): number {
  let fd: number | undefined;
  let discarded = 0;
  try {
    fd = openSync('/dev/tty', constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY);
    const buffer = Buffer.alloc(4096);
    // Bounded: a terminal being pasted into could fill it as fast as it is read.
    for (let reads = 0; reads < 64; reads++) {
      const read = readSync(fd, buffer);
      if (read <= 0) break;
      discarded += read;
    }
  } catch {
    // EAGAIN: nothing (more) pending; no /dev/tty (not a terminal, Windows): nothing to drop.
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  return discarded;
}

/** Keys that answer no: n, Enter, Escape, Ctrl-C, Ctrl-D. */
const noKeys = new Set(['n', 'N', '\r', '\n', '\r\n', '\u001b', '\u0003', '\u0004']);

const ctrlC = '\u0003';

/**
 * Asks a yes/no question on the terminal and reads one key: `y` is yes; `n`, Enter, Escape,
 * Ctrl-C and Ctrl-D are no — except that with `interruptQuits` Ctrl-C rejects with an
 * `AbortError` (the CLI then ends with 130, as Ctrl-C anywhere else at start). Keys typed
 * before it was asked are discarded; when there were any (someone is typing), the answer keys
 * (`answerKeys`) are drawn once the question has been on screen for `settleMs`
 * ({@link questionSettleMs}) and keys pressed before are dropped (said with them) — a `y` meant
 * for something else trusted a folder for good. Leaves the terminal as it found it (raw or not, paused).
 */
export function askOnTerminal(
  input: NodeJS.ReadStream,
  write: (text: string) => void,
  {
    interruptQuits = false,
    settleMs = questionSettleMs,
    discardTypedAhead = discardPendingInput,
  }: {
    interruptQuits?: boolean;
    settleMs?: number;
    /** Drops the keys typed before the question, returning how many bytes (tests pass their own). */
    discardTypedAhead?: () => number;
  } = {},
): (question: string, answerKeys: string) => Promise<boolean> {
  return (question, answerKeys) =>
    new Promise<boolean>((resolve, reject) => {
      const tty = input as ReadStream;
      const wasRaw = tty.isRaw === true;
      // Keys typed before the question was on screen are not its answer: a `y` typed while the
      // CLI started (the first letter of a prompt) trusted the folder for good.
      let typing = false;
      if (typeof tty.setRawMode === 'function') {
        tty.setRawMode(true);
        typing = discardTypedAhead() > 0;
      }
      write(question);
      let dropped = 0;
      // Someone typing as the question appeared may press a key as it is drawn: its keys wait
      // settleMs. Nobody typing: they are live at once.
      let settle: ReturnType<typeof setTimeout> | undefined;
      if (typing)
        settle = setTimeout(() => {
          settle = undefined;
          write(`${answerKeys}${droppedKeysNote(dropped)}`);
        }, settleMs);
      else write(answerKeys);
      const finish = (answer: boolean) => {
        clearTimeout(settle);
        input.off('data', onData);
        input.off('end', onEnd);
        if (typeof tty.setRawMode === 'function') tty.setRawMode(wasRaw);
        input.pause();
        write(answer ? 'yes\n' : 'no\n');
        resolve(answer);
      };
      const onEnd = () => finish(false);
      const onData = (chunk: Buffer | string) => {
        const text = chunk.toString();
        if (interruptQuits && text === ctrlC) {
          clearTimeout(settle);
          input.off('data', onData);
          input.off('end', onEnd);
          if (typeof tty.setRawMode === 'function') tty.setRawMode(wasRaw);
          input.pause();
          write('\n');
          reject(Object.assign(new Error('Interrupted at the question'), { name: 'AbortError' }));
          return;
        }
        // Pressed as the question appeared (its keys not drawn yet): not the answer.
        if (settle !== undefined) {
          if (text !== ctrlC) {
            dropped += 1;
            return;
          }
        }
        // A bracketed paste or any other input is not an answer: only a single key is.
        if (text === 'y' || text === 'Y') finish(true);
        else if (noKeys.has(text)) finish(false);
      };
      input.on('data', onData);
      input.once('end', onEnd);
      input.resume();
    });
}

/**
 * The workspace-trust question on the terminal (the REPL, before anything of the folder runs).
 * Ctrl-C there quits, as in Claude Code: nothing has started, and a user who presses it wants out,
 * not a session without the folder's configuration.
 */
export function askTrustOnTerminal(
  input: NodeJS.ReadStream,
  write: (text: string) => void,
  terminal?: { rows?: number; columns?: number },
): (question: TrustQuestion) => Promise<boolean> {
  const ask = askOnTerminal(input, write, { interruptQuits: true });
  return (question) => {
    const text = trustQuestionText(question);
    // A repository with a hundred hooks: the question's start (which folder, what it is) has
    // scrolled away when its keys are drawn.
    return ask(text, `${trustAnswerKeys}${tallerThan(terminal, text) ? tallNote : ''}`);
  };
}

/** The MCP tool-change question on the terminal. */
export function askMcpToolChangesOnTerminal(
  input: NodeJS.ReadStream,
  write: (text: string) => void,
): McpToolChangeQuestion {
  const ask = askOnTerminal(input, write);
  return ({ server, lines }) =>
    ask(
      `MCP server "${server}" changed its tools since you first used it:\n${lines.map((line) => `  ${line}`).join('\n')}\n${lookAlikeWarning(lines.join('\n'))}Let the model use them? `,
      '[y] yes [n] no ',
    );
}

/** A folder name or a warning on one line, escape sequences shown rather than obeyed. */
function shown(text: string): string {
  return terminalSafe(text, { singleLine: true });
}

/** `agent trust` (trust the folder now, pinned to what it has), `agent trust list`, `agent trust revoke`. */
export async function runTrustCommand(
  options: CliOptions,
  write: (text: string) => void,
): Promise<number> {
  const store = await TrustStore.open(trustStorePath());
  for (const warning of store.warnings) write(`agent: trust store: ${shown(warning)}\n`);
  // The project the folder belongs to (its git root…), as every start judges it.
  const project = findProjectRoot(options.cwd, { agentHome: agentHome() });
  const real = realFolder(project.root);
  // Folder names are a repository's (a clone's, a subfolder's): an escape sequence in one set the
  // window title and the clipboard when `agent trust` printed it.
  const folder = shown(real);
  switch (options.trustAction ?? 'add') {
    case 'list': {
      const entries = store.list();
      if (entries.length === 0) write(`No trusted folders (${store.path}).\n`);
      for (const entry of entries)
        write(
          `${shown(entry.folder)}${entry.recursive ? '' : ' (this folder only)'}  trusted ${entry.trustedAt.slice(0, 16).replace('T', ' ')}, ${Object.keys(entry.items).length} pinned item(s)\n`,
        );
      return 0;
    }
    case 'revoke': {
      const had = await store.revoke(real);
      const cover = store.entryFor(real, { ownRepository: project.kind === 'git' });
      write(
        had ? `${folder} is no longer trusted.\n` : `${folder} had no trust entry of its own.\n`,
      );
      if (cover !== undefined)
        write(
          `It is still covered by ${shown(cover.folder)}: run agent trust revoke --cwd ${shown(cover.folder)}\n`,
        );
      return had ? 0 : 1;
    }
    case 'add': {
      // What the folder would run or widen, pinned exactly as the next start will see it.
      const start = await startWithTrust({ ...options, trust: true }, { defaultMode: 'default' });
      const items = start.decision.accepted;
      await store.trust(real, items);
      write(
        `Trusted ${folder}${isWholesaleFolder(real) ? ' (this folder only: not the folders below it)' : ''}${items.length === 0 ? '.' : ', with:'}\n`,
      );
      for (const item of items)
        write(`  ${terminalSafe(item.description)} (${terminalSafe(item.source)})\n`);
      write('A change to any of these asks again. Undo with: agent trust revoke\n');
      return 0;
    }
    default: {
      const exhaustive: never = options.trustAction as never;
      throw new CliError(`Unknown trust action ${String(exhaustive)}`);
    }
  }
}
