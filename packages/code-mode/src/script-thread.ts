import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, Worker } from 'node:worker_threads';
import { OutputBuffer } from './output-buffer.js';
import {
  compileQuickJs,
  cpuTimeMessage,
  type ScriptFailure,
  type ScriptHost,
  type ScriptLimits,
  type ScriptOutcome,
} from './script-runtime.js';
import {
  type DescribeAnswer,
  type DescribeRequest,
  type ScriptWorkerData,
  type ScriptWorkerMessage,
  type ScriptWorkerReply,
  type ScriptWorkerRun,
  scriptWorkerMarker,
} from './script-worker-protocol.js';

// Scripts run in worker threads (script-worker.ts), never on the agent's own thread. QuickJS's
// interrupt check comes only every ~10,000 steps of its interpreter, and a step can be one call
// into its C code that takes tens of milliseconds (`indexOf` over a 16 MB string): a script of a
// few thousand such calls ran for minutes past its CPU limit, with the agent's event loop frozen
// (no timer, no abort, no Ctrl-C). Here the parent watches the CPU time the worker reports and
// ends the worker when it runs past the limit, or at once when the call is aborted; its own
// thread only ever waits.

/** Time past the CPU limit before the parent ends a worker whose own check did not come. */
const watchdogGraceMs = 100;
/** How often the parent looks at a running script's CPU time. */
const watchdogTickMs = 50;
/** The V8 heap of a worker (strings crossing out of QuickJS live there), in MiB. */
const workerHeapMb = 512;
/** Idle workers kept for the next scripts (each still gets a fresh QuickJS instance). */
const maxIdleWorkers = 2;

const idle: Worker[] = [];

/**
 * The worker module: `script-worker.js` next to this module (the package's dist, or a bundle that
 * ships it beside its chunks), else the package's dist seen from its sources (its own tests).
 */
export function scriptWorkerUrl(): URL | undefined {
  for (const candidate of ['./script-worker.js', '../dist/script-worker.js']) {
    const url = new URL(candidate, import.meta.url);
    if (url.protocol === 'file:' && existsSync(url)) return url;
  }
  return undefined;
}

function newWorker(url: URL, wasmModule: object): Worker {
  const workerData: ScriptWorkerData = { marker: scriptWorkerMarker, wasmModule };
  const worker = new Worker(url, {
    workerData,
    // The engine reaches nothing of the process, and its thread has nothing to reach either.
    env: {},
    // Not the process's own flags: some are refused in a worker (`--input-type`), and the worker
    // needs none.
    execArgv: [],
    resourceLimits: { maxOldGenerationSizeMb: workerHeapMb },
    // Nothing it writes reaches the terminal.
    stdout: true,
    stderr: true,
  });
  // A worker that dies while idle is simply not reused.
  worker.on('error', () => undefined);
  worker.once('exit', () => {
    const index = idle.indexOf(worker);
    if (index !== -1) idle.splice(index, 1);
  });
  return worker;
}

function takeWorker(url: URL, wasmModule: object): Worker {
  const worker = idle.pop() ?? newWorker(url, wasmModule);
  worker.ref();
  return worker;
}

function giveBack(worker: Worker): void {
  if (idle.length >= maxIdleWorkers) {
    void worker.terminate();
    return;
  }
  // An idle worker does not keep the process alive.
  worker.unref();
  idle.push(worker);
}

/**
 * Runs `code` as `runScript` does, but in a worker thread: a script that computes without end
 * blocks only its worker, which is ended past its CPU limit or on abort. Never throws.
 */
export async function runScriptInWorker(
  code: string,
  host: ScriptHost,
  limits: ScriptLimits,
  signal: AbortSignal,
): Promise<ScriptOutcome> {
  const output = new OutputBuffer(limits.maxOutputChars);
  const failed = (reason: ScriptFailure, message: string): ScriptOutcome => ({
    type: 'failed',
    reason,
    message,
    output,
  });
  const url = scriptWorkerUrl();
  if (url === undefined) {
    return failed(
      'runtime-failed',
      `The script runtime could not start: script-worker.js is not next to ${fileURLToPath(import.meta.url)} (a bundle must ship it beside its chunks)`,
    );
  }
  let worker: Worker;
  try {
    const wasmModule = await compileQuickJs();
    if (signal.aborted) return failed('aborted', 'The script was cancelled.');
    worker = takeWorker(url, wasmModule);
  } catch (error) {
    return failed('runtime-failed', `The script runtime could not start: ${String(error)}`);
  }
  const meterBuffer = new SharedArrayBuffer(3 * Float64Array.BYTES_PER_ELEMENT);
  const meter = new Float64Array(meterBuffer);
  meter[1] = -1;
  const controlBuffer = new SharedArrayBuffer(Int32Array.BYTES_PER_ELEMENT);
  const control = new Int32Array(controlBuffer);
  const describe = new MessageChannel();
  describe.port1.on('message', ({ id, names }: DescribeRequest) => {
    let text: string;
    try {
      text = host.describe(Array.isArray(names) ? names.map(String) : []);
    } catch (error) {
      text = `// The declarations could not be made: ${String(error)}`;
    }
    describe.port1.postMessage({ id, text } satisfies DescribeAnswer);
    Atomics.store(control, 0, 1);
    Atomics.notify(control, 0);
  });

  return new Promise<ScriptOutcome>((resolve) => {
    let settled = false;
    const finish = (outcome: ScriptOutcome, reusable: boolean) => {
      if (settled) return;
      settled = true;
      clearInterval(watchdog);
      signal.removeEventListener('abort', onAbort);
      worker.off('message', onMessage);
      worker.off('error', onError);
      worker.off('exit', onExit);
      describe.port1.close();
      output.addDropped(meter[2] ?? 0);
      if (reusable) giveBack(worker);
      else void worker.terminate();
      resolve(outcome);
    };
    const onMessage = (message: ScriptWorkerMessage) => {
      if (message.type === 'print') output.add(message.line);
      else if (message.type === 'call') {
        const reply = (envelope: string) => {
          if (!settled)
            worker.postMessage({
              type: 'reply',
              id: message.id,
              envelope,
            } satisfies ScriptWorkerReply);
        };
        // The host's calls resolve with an envelope; one that throws anyway is a failed call in
        // the script, never an unhandled rejection of the process.
        Promise.resolve()
          .then(() => host.call(message.name, message.json))
          .then(reply, (error: unknown) =>
            reply(
              JSON.stringify({
                ok: false,
                kind: 'failed',
                message: `The call of ${message.name} failed: ${String(error)}`,
              }),
            ),
          );
      } else {
        const { outcome } = message;
        finish(
          outcome.type === 'returned'
            ? { type: 'returned', value: outcome.value, output }
            : failed(outcome.reason as ScriptFailure, outcome.message),
          true,
        );
      }
    };
    const onError = (error: Error & { code?: string }) => {
      finish(
        error.code === 'ERR_WORKER_OUT_OF_MEMORY'
          ? failed(
              'memory',
              `The script ran out of memory (limit ${Math.round(limits.memoryBytes / 1024 / 1024)} MB): its worker's heap is full`,
            )
          : failed('runtime-failed', `The script runtime failed: ${String(error)}`),
        false,
      );
    };
    const onExit = () =>
      finish(failed('runtime-failed', 'The script runtime failed: its worker stopped'), false);
    const onAbort = () => finish(failed('aborted', 'The script was cancelled.'), false);
    // The worker's own interrupt check stops a script at its limit; this is for when that check
    // does not come (a long call into the engine's C code), or the worker is stuck otherwise.
    const watchdog = setInterval(() => {
      const sliceStart = meter[1] ?? -1;
      const running = sliceStart < 0 ? 0 : performance.timeOrigin + performance.now() - sliceStart;
      if ((meter[0] ?? 0) + running > limits.cpuTimeMs + watchdogGraceMs) {
        finish(failed('cpu-time', cpuTimeMessage(limits)), false);
      }
    }, watchdogTickMs);
    worker.on('message', onMessage);
    worker.on('error', onError);
    worker.once('exit', onExit);
    signal.addEventListener('abort', onAbort, { once: true });
    if (signal.aborted) {
      onAbort();
      return;
    }
    const run: ScriptWorkerRun = {
      type: 'run',
      code,
      names: host.names,
      limits,
      meter: meterBuffer,
      control: controlBuffer,
      describePort: describe.port2,
    };
    worker.postMessage(run, [describe.port2]);
  });
}
