// `/output [n]` in the REPL: a tool's result is shown as its first line and a count (`✓ bash: 1
// (+3000 lines)`), and a new user found no way to read the rest short of asking the model to
// repeat it. This prints the whole text of the last result (or the n-th from last) as the model
// read it.
import type { Message } from '@agent/core';

/**
 * The lines that show the `n`-th last tool result of `messages` (1: the last): a header naming
 * the tool and the call, then its text content whole; or one line saying why there is none.
 */
export function toolOutputText(messages: readonly Message[], argument: string): string {
  const wanted = argument === '' ? 1 : Number(argument);
  if (!Number.isInteger(wanted) || wanted < 1)
    return `/output [n]: n counts tool results back from the last (1, 2, …), not "${argument}"`;
  const results = messages.filter((message) => message.role === 'toolResult');
  if (results.length === 0) return 'no tool result in this conversation yet';
  const result = results.at(-wanted);
  if (result === undefined || result.role !== 'toolResult')
    return `only ${results.length} tool result${results.length === 1 ? '' : 's'} in this conversation`;
  const text = result.content
    .map((part) =>
      part.type === 'text'
        ? part.text
        : part.type === 'image'
          ? `[image ${part.mimeType}]`
          : JSON.stringify(part),
    )
    .join('\n');
  const lines = text.split('\n').length;
  const mark = result.isError ? '✗' : '✓';
  return `${mark} ${result.toolName} (${result.toolCallId}), ${lines} line${lines === 1 ? '' : 's'}:\n${text}`;
}
