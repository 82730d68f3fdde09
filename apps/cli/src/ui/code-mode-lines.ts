/**
 * Code mode in the transcript: one line under a script's result counting the calls it made (the
 * calls' own events are not printed one by one: a script may make hundreds).
 */
import type { CodeModeDetails } from '@agent/code-mode';

/**
 * One line under a script's result in the transcript: the calls it made
 * (`↳ 26 calls from the script: glob, read_file ×24, bash [denied]`), or undefined when the
 * details are not a script's.
 */
export function nestedCallsLine(details: unknown): string | undefined {
  const calls = (details as Partial<CodeModeDetails> | undefined)?.calls;
  if (!Array.isArray(calls) || calls.length === 0) return undefined;
  const counts = new Map<string, number>();
  for (const call of calls) {
    const label =
      call.isError && call.errorKind !== undefined
        ? `${call.toolName} [${call.errorKind}]`
        : call.toolName;
    counts.set(label, (counts.get(label) ?? 0) + 1);
  }
  const parts = [...counts].map(([label, count]) => (count === 1 ? label : `${label} ×${count}`));
  return `    ↳ ${calls.length} call${calls.length === 1 ? '' : 's'} from the script: ${parts.join(', ')}`;
}
