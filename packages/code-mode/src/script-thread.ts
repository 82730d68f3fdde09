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

/** The CPU time all of this process's threads have used, in milliseconds. */
function processCpuMs(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1000;
}

/** Time past the CPU limit before the parent ends a worker whose own check did not come. */
const watchdogGraceMs = 100;
/** How often the parent looks at a running script's CPU time. */
const watchdogTickMs = 50;
/** The V8 heap of a worker (strings crossing out of QuickJS live there), in MiB. */
const workerHeapMb = 512;
/** Idle workers kept for the next scripts (each still gets a fresh QuickJS instance). */
const maxIdleWorkers = 2;
/**
 * Workers at most. Each costs ~8 MB and ~100 ms to start under load: a burst of 200 parallel
 * scripts took 850 MB and 30 s with a worker each. Past this many, a script shares the least
 * busy worker (its own QuickJS instance there), rather than wait — a waiting script could be the
 * one a running script waits for (a sub-agent's). A script ended on a shared worker ends the
 * others on it: only in such a burst.
 */
const maxWorkers = 16;

/** A worker and the scripts it runs now. */
interface PooledWorker {
  worker: Worker;
  runs: number;
  ended: boolean;
}

const pool: PooledWorker[] = [];
let nextRunId = 0;

/**
 * The worker module: `script-worker.js` next to this module (the package's dist, or a bundle that
 * ships it beside its chunks), else the package's dist seen from its sources (its own tests).
 */
export function scriptWorkerUrl(): URL | undefined {
  // The sources' fallback only from the sources themselves: a bundle elsewhere must not pick up
  // some other project's dist/script-worker.js.
  const fromSources = import.meta.url.endsWith('/src/script-thread.ts');
  const candidates = ['./script-worker.js', ...(fromSources ? ['../dist/script-worker.js'] : [])];
  for (const candidate of candidates) {
    const url = new URL(candidate, import.meta.url);
    if (url.protocol === 'file:' && existsSync(url)) return url;
  }
  return undefined;
}

function newWorker(url: URL, wasmModule: object): PooledWorker {
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
  // Each run listens while it lasts; a shared worker has many runs.
  worker.setMaxListeners(0);
  const pooled: PooledWorker = { worker, runs: 0, ended: false };
  // A worker that fails or exits is never handed out again; its runs learn it from their own
  // listeners.
  worker.on('error', () => undefined);
  worker.once('exit', () => forget(pooled));
  pool.push(pooled);
  return pooled;
}

function forget(pooled: PooledWorker): void {
  pooled.ended = true;
  const index = pool.indexOf(pooled);
  if (index !== -1) pool.splice(index, 1);
}

/** A free worker, a new one, or (at `maxWorkers`) the least busy one. */
function takeWorker(url: URL, wasmModule: object): PooledWorker {
  const live = pool.filter((pooled) => !pooled.ended && pooled.worker.threadId !== -1);
  const chosen =
    live.find((pooled) => pooled.runs === 0) ??
    (live.length < maxWorkers
      ? newWorker(url, wasmModule)
      : live.reduce((least, pooled) => (pooled.runs < least.runs ? pooled : least)));
  chosen.runs++;
  chosen.worker.ref();
  return chosen;
}

/** A run is over: its worker is ended (`reusable` false) or kept, idle ones up to a few. */
function giveBack(pooled: PooledWorker, reusable: boolean): void {
  pooled.runs--;
  if (!reusable) {
    forget(pooled);
    void pooled.worker.terminate();
    return;
  }
  if (pooled.runs > 0 || pooled.ended) return;
  const idle = pool.filter((each) => each.runs === 0 && !each.ended).length;
  if (idle > maxIdleWorkers) {
    forget(pooled);
    void pooled.worker.terminate();
    return;
  }
  // An idle worker does not keep the process alive.
  pooled.worker.unref();
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
  let pooled: PooledWorker;
  try {
    const wasmModule = await compileQuickJs();
    if (signal.aborted) return failed('aborted', 'The script was cancelled.');
    pooled = takeWorker(url, wasmModule);
  } catch (error) {
    return failed('runtime-failed', `The script runtime could not start: ${String(error)}`);
  }
  const { worker } = pooled;
  const runId = nextRunId++;
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
      giveBack(pooled, reusable);
      resolve(outcome);
    };
    const onMessage = (message: ScriptWorkerMessage) => {
      // A shared worker speaks of other runs too.
      if (message.runId !== runId) return;
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
      finish(
        failed(
          'runtime-failed',
          'The script runtime failed: its worker stopped (in a burst of scripts, another one sharing it may have been stopped)',
        ),
        false,
      );
    const onAbort = () => finish(failed('aborted', 'The script was cancelled.'), false);
    // The worker's own interrupt check stops a script at its limit; this is for when that check
    // does not come (a long call into the engine's C code), or the worker is stuck otherwise.
    // The slice the worker is in, and when this thread first saw it (its own clocks only). The
    // worker's CPU time cannot be read from here: the time a slice has run counts as the lesser
    // of the wall time and the CPU time the whole process used meanwhile — on a loaded machine,
    // where wall time runs far ahead, the worker is not ended before it can have used its limit.
    let seen: { slice: number; since: number; cpu: number } | undefined;
    const watchdog = setInterval(() => {
      const slice = meter[1] ?? -1;
      if (slice < 0) seen = undefined;
      else if (seen?.slice !== slice)
        seen = { slice, since: performance.now(), cpu: processCpuMs() };
      const running =
        seen === undefined
          ? 0
          : Math.min(performance.now() - seen.since, processCpuMs() - seen.cpu);
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
      runId,
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
