// The interactive session: the terminal's input, approvals and MCP questions around the REPL.
import { resolve } from 'node:path';
import type { CliOptions } from '../config/args.js';
import { terminalPlanApprover } from '../session/plan-mode.js';
import { createSession } from '../session/session.js';
import { heldWhileAsking } from '../ui/held-output.js';
import { McpInteractions } from '../ui/mcp-interactions.js';
import { noticeText, useColour, writeErr, writeOut } from '../ui/output.js';
import { RunKeys, terminalApprover } from '../ui/terminal-keys.js';
import { PromptInput } from './prompt-input.js';
import { runRepl } from './repl.js';
import { askMcpToolChangesOnTerminal } from './trust-command.js';

/** The interactive session. */
export async function replMode(options: CliOptions): Promise<number> {
  // The terminal's input for the whole session: lines typed at any time are kept.
  const prompt = new PromptInput(process.stdin, process.stdout);
  const keys = new RunKeys(prompt.keys);
  // A notice (a server's log, a setting's warning) that comes while a question waits is written
  // once it is answered, not onto the question's line.
  const heldNotice = heldWhileAsking(writeErr, () => keys.waiting);
  const writeNotice = (line: string) => heldNotice(noticeText(line));
  const session = await createSession(options, {
    mode: options.mode ?? 'default',
    approver: terminalApprover(keys, writeOut, {
      cwd: resolve(options.cwd),
      colour: useColour(process.stdout),
      terminal: process.stdout,
    }),
    log: writeNotice,
    confirmMcpToolChanges: askMcpToolChangesOnTerminal(process.stdin, writeOut),
    planApprover: terminalPlanApprover(keys, writeOut),
    mcpInteractions: new McpInteractions({
      keys,
      write: writeOut,
      log: writeNotice,
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
