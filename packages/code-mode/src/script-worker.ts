import { parentPort, receiveMessageOnPort, workerData } from 'node:worker_threads';
import { OutputBuffer } from './output-buffer.js';
import { runScript, useCompiledQuickJs } from './script-runtime.js';
import {
  type DescribeAnswer,
  type DescribeRequest,
  type ScriptWorkerData,
  type ScriptWorkerMessage,
  type ScriptWorkerReply,
  type ScriptWorkerRun,
  scriptWorkerMarker,
} from './script-worker-protocol.js';

// A worker thread that runs scripts for its parent, script-thread.ts (one at a time, unless the
// parent has as many workers as it allows: then several, each in its own QuickJS instance). QuickJS
// runs here, not on the agent's thread: a script can block only this thread, and the parent ends
// it when the script's CPU time (the meter it shares) runs past the limit — also inside one long
// call into the engine's C code (a search over a 16 MB string), where QuickJS's own interrupt
// check never comes — or when the call is aborted. The worker holds no secrets and no tools:
// each nested call is a message to the parent, which runs it through the loop.

/** How long `declarations(…)` waits for the parent's answer. */
const describeWaitMs = 10_000;

const data = workerData as ScriptWorkerData | undefined;
if (parentPort !== null && data?.marker === scriptWorkerMarker) {
  const port = parentPort;
  useCompiledQuickJs(data.wasmModule);
  const waiting = new Map<number, (envelope: string) => void>();
  let nextId = 0;
  const neverAborted = new AbortController().signal;
  let nextDescribeId = 0;
  port.on('message', (message: ScriptWorkerRun | ScriptWorkerReply) => {
    if (message.type === 'reply') {
      const answer = waiting.get(message.id);
      waiting.delete(message.id);
      answer?.(message.envelope);
      return;
    }
    void run(message);
  });

  const run = async (job: ScriptWorkerRun) => {
    const meter = new Float64Array(job.meter);
    const control = new Int32Array(job.control);
    const output = new OutputBuffer(job.limits.maxOutputChars, {
      kept: (line) =>
        port.postMessage({ type: 'print', runId: job.runId, line } satisfies ScriptWorkerMessage),
      dropped: (total) => {
        meter[2] = total;
      },
    });
    // This run's calls still waiting for their answer.
    const own = new Set<number>();
    const host = {
      names: job.names,
      call: (name: string, json: string) =>
        new Promise<string>((resolve) => {
          const id = nextId++;
          own.add(id);
          waiting.set(id, resolve);
          port.postMessage({
            type: 'call',
            runId: job.runId,
            id,
            name,
            json,
          } satisfies ScriptWorkerMessage);
        }),
      describe: (names: readonly string[]) => {
        const id = nextDescribeId++;
        Atomics.store(control, 0, 0);
        job.describePort.postMessage({ id, names } satisfies DescribeRequest);
        // The parent answers at once (it is never blocked by a script); the wait is bounded
        // anyway, and an answer to an earlier question that came too late is skipped.
        const deadline = Date.now() + describeWaitMs;
        for (let left = describeWaitMs; left > 0; left = deadline - Date.now()) {
          Atomics.wait(control, 0, 0, left);
          Atomics.store(control, 0, 0);
          for (let answer = receiveMessageOnPort(job.describePort); answer !== undefined; ) {
            const reply = answer.message as DescribeAnswer;
            if (reply.id === id) return reply.text;
            answer = receiveMessageOnPort(job.describePort);
          }
        }
        return '// The declarations could not be read in time.';
      },
    };
    const outcome = await runScript(job.code, host, job.limits, neverAborted, { output, meter });
    // Calls the script left unanswered are never answered (the parent stops replying when the
    // script ends): forgotten here, or a reused worker would keep them for good.
    for (const id of own) waiting.delete(id);
    job.describePort.close();
    port.postMessage({
      type: 'done',
      runId: job.runId,
      outcome:
        outcome.type === 'returned'
          ? { type: 'returned', value: outcome.value }
          : { type: 'failed', reason: outcome.reason, message: outcome.message },
    } satisfies ScriptWorkerMessage);
  };
}
