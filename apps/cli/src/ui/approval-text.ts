// What an approval question shows of a call: everything that will run, or no question at all.
// The question showed the call's permission subjects clipped at 300 characters — `ls <300
// characters>; curl … | sh` was asked as `ls aaa…` — and subjects leave out what a command reads
// as its program: `python3 <<'EOF' … EOF` was asked as `python3`, `cat > run.sh <<'EOF'` as
// `cat, > run.sh`, `tee ~/.bashrc <<< '…'` as `tee ~/.bashrc`.
import { type PermissionRequest, terminalSafe } from '@agent/core';

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

/** The question's text, or undefined when it is too long to be read whole (then it is not asked). */
export function approvalText(
  request: Pick<PermissionRequest, 'args' | 'subjects' | 'toolName'>,
  prefix: string,
  suffix: string,
): { text: string } | { tooLong: number } {
  const block = commandBlock(request);
  const description = describeCall(request.subjects, request.args);
  const size = block.length + description.length;
  if (size > maximumApprovalChars) return { tooLong: size };
  return {
    text: `\n${block}${prefix}Allow ${request.toolName}: ${description}?${suffix}`,
  };
}
