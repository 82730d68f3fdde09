// `agent -p` in text format writes the answer on stdout when the run ends. A run cut off while
// the model was writing (Ctrl-C, SIGTERM, a connection lost mid-answer) used to write nothing
// there: what the model had written, already paid for and kept in the session, was not shown.
import { type AgentRunResult, messageText } from '@agent/core';

/**
 * The text of an answer the run was writing when it stopped: the run's last message is the
 * model's, with text and no tool call (text beside a tool call is shown in the transcript).
 */
export function partialAnswer(result: AgentRunResult): string | undefined {
  if (result.stopReason !== 'aborted' && result.stopReason !== 'error') return undefined;
  const last = result.messages.at(-1);
  if (last === undefined || last.role !== 'assistant' || last !== result.finalMessage)
    return undefined;
  if (last.content.some((block) => block.type === 'toolCall')) return undefined;
  const text = messageText(last);
  return text.trim() === '' ? undefined : text;
}

/** What stopped a run early, as the note names it. */
export type RunStop = { kind: 'signal'; signal: NodeJS.Signals } | { kind: 'error' };

const kept = 'the conversation is kept (agent --continue goes on with it)';

/** The one line on stderr after a `-p` run stopped early: what stopped it and what is kept. */
export function partialAnswerNote(stop: RunStop, partial: boolean): string {
  if (stop.kind === 'error')
    return `agent: the answer on stdout is cut off where the error above ended the run; ${kept}`;
  const what = stop.signal === 'SIGINT' ? 'interrupted (Ctrl-C)' : `stopped by ${stop.signal}`;
  return partial
    ? `agent: ${what}: the answer on stdout is cut off where the model was; ${kept}; exit 130`
    : `agent: ${what} before the model answered; ${kept}; exit 130`;
}
