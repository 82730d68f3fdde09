// How many child runs of one sub-agent a calling run may have at once: a model that asks for a
// hundred sub-agents in one turn gets them a few at a time, not a hundred loops (each with its own
// parallel tool calls and model calls) at once.

/** Default of `SubAgentToolOptions.maxConcurrentRuns`. */
export const defaultMaxConcurrentRuns = 4;

interface Waiter {
  start: () => void;
}

/** Slots of one (sub-agent, calling run) pair. */
class Slots {
  running = 0;
  readonly waiting: Waiter[] = [];
}

// Keyed by the sub-agent's options (shared by its copies one level deeper) and then by the calling
// run: a child's own calls of the same sub-agent are counted for the child's run, never against the
// slots its ancestors hold (which would wait for each other for ever).
const slotsByAgent = new WeakMap<object, Map<string, Slots>>();

/**
 * Waits for a free slot (at most `limit` running for this sub-agent and calling run) and returns
 * its release; `onWait` hears once that the call waits. Rejects with the signal's reason if it
 * aborts first.
 */
export async function takeRunSlot(options: {
  agent: object;
  callingRun: string;
  limit: number;
  signal: AbortSignal;
  onWait: (running: number) => void;
}): Promise<() => void> {
  const { agent, callingRun, limit, signal } = options;
  signal.throwIfAborted();
  let byRun = slotsByAgent.get(agent);
  if (byRun === undefined) {
    byRun = new Map();
    slotsByAgent.set(agent, byRun);
  }
  let slots = byRun.get(callingRun);
  if (slots === undefined) {
    slots = new Slots();
    byRun.set(callingRun, slots);
  }
  const held = slots;
  const table = byRun;
  const release = () => {
    const next = held.waiting.shift();
    if (next !== undefined) next.start();
    else {
      held.running -= 1;
      if (held.running === 0) table.delete(callingRun);
    }
  };
  if (held.running < limit) {
    held.running += 1;
    return once(release);
  }
  options.onWait(held.running);
  await new Promise<void>((resolve, reject) => {
    const waiter: Waiter = {
      // The slot passes straight from the run that ended to this one: `running` stays the same.
      start: () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
    };
    const onAbort = () => {
      const index = held.waiting.indexOf(waiter);
      if (index !== -1) held.waiting.splice(index, 1);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    held.waiting.push(waiter);
  });
  return once(release);
}

function once(release: () => void): () => void {
  let done = false;
  return () => {
    if (done) return;
    done = true;
    release();
  };
}
