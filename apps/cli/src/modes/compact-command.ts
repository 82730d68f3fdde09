import { type CompactionOutcome, errorMessage } from '@agent/core';
import type { EventSink, Session } from '../session/session.js';
import type { RunKeys } from '../ui/terminal-keys.js';

/**
 * `/compact [focus]`: summarises everything but the newest turn now (Ctrl-C stops the summary
 * call), showing the compaction in the transcript and counting its tokens in `/cost`.
 */
export async function compactCommand(options: {
  session: Session;
  focus: string;
  transcript: EventSink & { line(text: string): void };
  keys: RunKeys;
}): Promise<CompactionOutcome | undefined> {
  const { session, transcript, keys } = options;
  const controller = new AbortController();
  const unsubscribe = session.agent.subscribe((event) => transcript.onEvent(event));
  keys.start(() => controller.abort(new Error('Interrupted by the user')));
  try {
    const outcome = await session.agent.compact({
      ...(options.focus === '' ? {} : { focus: options.focus }),
      signal: controller.signal,
    });
    if (outcome.type === 'skipped') transcript.line(`nothing to compact: ${outcome.reason}`);
    if (outcome.type === 'compacted') {
      const { usage } = outcome.compaction;
      session.usage.input += usage.input;
      session.usage.output += usage.output;
      session.usage.cacheRead += usage.cacheRead;
      if (usage.cost !== undefined)
        session.usage.cost = (session.usage.cost ?? 0) + usage.cost.total;
    }
    return outcome;
  } catch (error) {
    transcript.line(`error: ${errorMessage(error)}`);
    return undefined;
  } finally {
    keys.stop();
    unsubscribe();
  }
}
