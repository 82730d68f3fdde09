// What an approval question shows of a call: everything that will run, or no question at all.
// The question showed the call's permission subjects clipped at 300 characters — `ls <300
// characters>; curl … | sh` was asked as `ls aaa…` — and subjects leave out what a command reads
// as its program: `python3 <<'EOF' … EOF` was asked as `python3`, `cat > run.sh <<'EOF'` as
// `cat, > run.sh`, `tee ~/.bashrc <<< '…'` as `tee ~/.bashrc`; an MCP or OpenAPI call showed
// its `server/tool` or `POST /path` only, its arguments cut at 200 characters in the transcript.
import { type PermissionRequest, terminalSafe } from '@agent/core';
import { isFileChangeTool } from './file-diff.js';

/**
 * Longest approval question asked (characters of the call's description and command). A longer
 * call is not asked about: it is denied, since a question the user cannot read whole is no
 * question (the model can write a long script to a file and run that).
 */
export const maximumApprovalChars = 16_000;

/** What a call touches, on the question's line: its permission subjects, else its arguments. */
export function describeCall(subjects: readonly string[], args: unknown): string {
  // The model wrote it: a carriage return or `ESC [2K` in a command would rewrite the question.
  return terminalSafe(subjects.length > 0 ? subjects.join(', ') : (JSON.stringify(args) ?? ''), {
    singleLine: true,
  });
}

/**
 * The command line a call runs (bash's `command`), shown above the question when the subjects
 * do not already say all of it: one `$ ` line, its further lines indented, control characters
 * shown as escapes. '' when the call has no command or its one subject is the whole line.
 */
export function commandBlock(request: Pick<PermissionRequest, 'args' | 'subjects'>): string {
  const args = request.args;
  if (args === null || typeof args !== 'object') return '';
  const command = (args as { command?: unknown }).command;
  if (typeof command !== 'string') return '';
  const line = command.trim();
  if (request.subjects.length === 1 && request.subjects[0] === line) return '';
  const lines = line.split('\n').map((each) => terminalSafe(each, { singleLine: true }));
  return `    $ ${lines.join('\n      ')}\n`;
}

/**
 * The arguments of a call whose subjects name only what it touches (an MCP tool's
 * `server/tool`, an OpenAPI `POST /messages`): the whole JSON, one key per line, shown above the
 * question — the transcript's line of the call stops at 200 characters, so a recipient after a
 * long message body was never on screen. Not for bash (its command is shown) nor the file tools
 * (their diff is); '' when there are no arguments.
 */
export function argumentsBlock(
  request: Pick<PermissionRequest, 'args' | 'subjects' | 'toolName'>,
): string {
  if (request.toolName === 'bash' || isFileChangeTool(request.toolName)) return '';
  const args = request.args;
  if (args === null || typeof args !== 'object' || Object.keys(args).length === 0) return '';
  const lines = (JSON.stringify(args, null, 2) ?? '')
    .split('\n')
    .map((line) => terminalSafe(line, { singleLine: true }));
  return `${lines.map((line) => `    ${line}`).join('\n')}\n`;
}

/** The question's text, or undefined when it is too long to be read whole (then it is not asked). */
export function approvalText(
  request: Pick<PermissionRequest, 'args' | 'subjects' | 'toolName'>,
  prefix: string,
  suffix: string,
): { text: string } | { tooLong: number } {
  const block = request.toolName === 'bash' ? commandBlock(request) : argumentsBlock(request);
  const description = describeCall(request.subjects, request.args);
  const size = block.length + description.length;
  if (size > maximumApprovalChars) return { tooLong: size };
  return {
    text: `\n${block}${prefix}Allow ${request.toolName}: ${description}?${suffix}`,
  };
}
