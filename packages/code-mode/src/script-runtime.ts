import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';
import QuickJsPackage from '@jitl/quickjs-wasmfile-release-sync';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  type QuickJSContext,
  type QuickJSDeferredPromise,
  type QuickJSHandle,
  type QuickJSRuntime,
  type QuickJSSyncVariant,
  type QuickJSWASMModule,
} from 'quickjs-emscripten-core';
import { OutputBuffer } from './output-buffer.js';
import { scriptPrelude } from './script-prelude.js';

// One script in a fresh QuickJS runtime (WebAssembly): no filesystem, network, process, timers
// or modules exist in it — its only ways out are the host functions the prelude wraps. CPU time
// is counted only while the interpreter runs (not while a tool call or an approval is awaited),
// memory and stack are capped by QuickJS itself, output by the host.

/** Limits of one script run. */
export interface ScriptLimits {
  /** CPU time the interpreter may spend on the script, in ms. */
  cpuTimeMs: number;
  /** Memory the script's runtime may allocate, in bytes. */
  memoryBytes: number;
  /** The interpreter's stack, in bytes. */
  stackBytes: number;
  /** Characters of console output and returned value kept; the rest is counted and dropped. */
  maxOutputChars: number;
}

/** What the script reaches outside itself, through the prelude. */
export interface ScriptHost {
  /** The tool names the script's `tools` object has. */
  names: readonly string[];
  /** Runs a nested call; resolves with the JSON envelope the prelude reads, never rejects. */
  call(name: string, argumentsJson: string): Promise<string>;
  /** Declarations of the named tools (all when none are named), for `declarations(…)` in a script. */
  describe(names: readonly string[]): string;
}

/** Why a script did not return. */
export type ScriptFailure =
  | 'threw'
  | 'cpu-time'
  | 'memory'
  | 'stuck'
  | 'aborted'
  | 'runtime-failed';

/** How a script run ended, with everything it printed. */
export type ScriptOutcome =
  | { type: 'returned'; output: OutputBuffer; value: string | undefined }
  | { type: 'failed'; reason: ScriptFailure; message: string; output: OutputBuffer };

// The package's types are CommonJS (`export default` of a CJS module): under NodeNext the
// default import is typed as the namespace, while at run time it is the variant itself.
const quickJsVariant = QuickJsPackage as unknown as QuickJSSyncVariant;

/** A compiled `WebAssembly.Module` (the lib used here has no WebAssembly types). */
type CompiledWasm = object;
/** A `WebAssembly.Memory`: the linear memory of one script's instance. */
interface WasmMemory {
  readonly buffer: ArrayBuffer;
}
const wasmApi = (
  globalThis as unknown as {
    WebAssembly: {
      compile(bytes: Uint8Array): Promise<CompiledWasm>;
      Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory;
    };
  }
).WebAssembly;

const wasmPageBytes = 65_536;
/** The build's own initial memory (16 MiB): an instance's memory cannot start smaller. */
const initialWasmPages = 256;
/**
 * Room above the script's memory limit for QuickJS itself. Typed-array data is not counted by
 * QuickJS's limit, so the instance's memory is capped too: no script can grow the host by more
 * than `memoryBytes` plus this.
 */
const wasmHeadroomBytes = 16 * 1024 * 1024;

let compiled: Promise<CompiledWasm> | undefined;

/** Uses a module compiled elsewhere (a worker gets the one its parent compiled). */
export function useCompiledQuickJs(module: CompiledWasm): void {
  compiled = Promise.resolve(module);
}

/**
 * The QuickJS WebAssembly code, compiled once per process. Each script instantiates it afresh:
 * its own linear memory, so no script can see another's data, and a trap ends only its own.
 */
export function compileQuickJs(): Promise<CompiledWasm> {
  compiled ??= Promise.resolve()
    .then(() => readFile(wasmLocation()))
    .then((bytes) => wasmApi.compile(bytes))
    .catch((error: unknown) => {
      compiled = undefined;
      throw error;
    });
  return compiled;
}

/**
 * The `.wasm` file. A bundle (like the `agent` CLI) ships it next to itself: that copy matches
 * the glue code bundled with it, so it comes first — a package found by resolution could be
 * another version. Otherwise it is read from its package.
 */
function wasmLocation(): URL {
  const beside = new URL('./emscripten-module.wasm', import.meta.url);
  if (existsSync(beside)) return beside;
  try {
    return pathToFileURL(
      createRequire(import.meta.url).resolve('@jitl/quickjs-wasmfile-release-sync/wasm'),
    );
  } catch {
    throw new Error(
      `QuickJS's emscripten-module.wasm is neither next to ${fileURLToPath(import.meta.url)} nor in @jitl/quickjs-wasmfile-release-sync (a bundle must copy it next to itself)`,
    );
  }
}

/** A fresh instance whose linear memory can never grow past the script's limit plus headroom. */
async function newQuickJs(
  memoryBytes: number,
): Promise<{ module: QuickJSWASMModule; memory: WasmMemory; maxBytes: number }> {
  const wasmModule = await compileQuickJs();
  const maximum = Math.max(
    initialWasmPages,
    Math.ceil((memoryBytes + wasmHeadroomBytes) / wasmPageBytes),
  );
  const memory = new wasmApi.Memory({ initial: initialWasmPages, maximum });
  const module = await newQuickJSWASMModuleFromVariant(
    newVariant(quickJsVariant, { wasmModule: wasmModule as never, wasmMemory: memory as never }),
  );
  return { module, memory, maxBytes: maximum * wasmPageBytes };
}

/**
 * The CPU time this thread has used, in milliseconds: what the script limit counts. A busy
 * machine (a CI run, a build beside the agent) gives the thread a fraction of a core, and wall
 * time then ran out long before CPU time did — a 5 s limit stopped a script that had used a
 * fraction of it. Where Node cannot tell (`process.threadCpuUsage` is Node ≥ 23.9), wall time.
 */
function threadCpuMs(): number {
  if (threadCpuUsage === undefined) return performance.now();
  const { user, system } = threadCpuUsage();
  return (user + system) / 1000;
}
const threadCpuUsage = (
  process as { threadCpuUsage?: () => { user: number; system: number } }
).threadCpuUsage?.bind(process);

/**
 * Where a run reports the CPU time it used, for a watchdog in another thread: `[0]` the
 * milliseconds used by finished slices, `[1]` the number of the running slice (1, 2, …), or -1
 * between slices. The watchdog times a slice with its own clock, from when it first sees its
 * number: two threads' clocks are never compared (their origins differ by a wall-clock step).
 */
export type CpuMeter = Float64Array;

/** Extras of {@link runScript}. */
export interface RunScriptOptions {
  /** Where printed lines go [a new buffer of `limits.maxOutputChars`]. */
  output?: OutputBuffer;
  /** Updated at each slice's start and end. */
  meter?: CpuMeter;
}

/**
 * Runs `code` (JavaScript evaluating to a promise: the wrapped script) in a fresh runtime, on
 * the calling thread. Never throws; every failure is a `failed` outcome.
 */
export async function runScript(
  code: string,
  host: ScriptHost,
  limits: ScriptLimits,
  signal: AbortSignal,
  options: RunScriptOptions = {},
): Promise<ScriptOutcome> {
  const output = options.output ?? new OutputBuffer(limits.maxOutputChars);
  let instance: Awaited<ReturnType<typeof newQuickJs>>;
  try {
    instance = await newQuickJs(limits.memoryBytes);
  } catch (error) {
    return failed('runtime-failed', `The script runtime could not start: ${String(error)}`, output);
  }
  const memoryFull = () => instance.memory.buffer.byteLength >= instance.maxBytes * 0.9;
  let run: ScriptRun | undefined;
  try {
    run = new ScriptRun(instance.module, host, limits, signal, output, memoryFull, options.meter);
    const outcome = await run.execute(code);
    try {
      run.dispose();
    } catch {
      // QuickJS asserts that freeing a runtime leaves no object behind, and a script stopped in
      // an endless chain of promise jobs leaves jobs queued: the instance traps. The outcome
      // stands (it was reported as the runtime failing); the instance is dropped whole.
      run.abandon();
    }
    return outcome;
  } catch (error) {
    // A trap inside the instance, not a JavaScript exception (the host's stack ran out in deep
    // recursion, or an allocation failed where QuickJS does not expect it): this script's
    // instance is dropped whole, never disposed or reused.
    run?.abandon();
    if (memoryFull()) return failed('memory', outOfMemory(limits, String(error)), output);
    if (error instanceof RangeError)
      return failed(
        'runtime-failed',
        'The script nested too deeply (recursion, or deeply nested data or code) and was stopped.',
        output,
      );
    return failed('runtime-failed', `The script runtime failed: ${String(error)}`, output);
  }
}

/** What a script stopped at its CPU limit is told. */
export function cpuTimeMessage(limits: ScriptLimits): string {
  return `The script used more than its ${limits.cpuTimeMs} ms of CPU time and was stopped (an endless loop?).`;
}

function outOfMemory(limits: ScriptLimits, detail: string): string {
  return `The script ran out of memory (limit ${Math.round(limits.memoryBytes / 1024 / 1024)} MB): ${detail}`;
}

function failed(reason: ScriptFailure, message: string, output: OutputBuffer): ScriptOutcome {
  return { type: 'failed', reason, message, output };
}

class ScriptRun {
  readonly #runtime: QuickJSRuntime;
  readonly #context: QuickJSContext;
  readonly #pending = new Set<QuickJSDeferredPromise>();
  readonly #handles: QuickJSHandle[] = [];
  #cpuUsedMs = 0;
  #sliceStart: number | undefined;
  /** Slices run so far (numbers them for the meter). */
  #slices = 0;
  #interrupted: 'cpu-time' | 'aborted' | undefined;
  #disposed = false;
  /** The prelude's `explain(error)`, once it is installed. */
  #explain: QuickJSHandle | undefined;
  /** Wakes the event loop when a host call settles or the run is aborted. */
  #wake: (() => void) | undefined;

  constructor(
    module: QuickJSWASMModule,
    private readonly host: ScriptHost,
    private readonly limits: ScriptLimits,
    private readonly signal: AbortSignal,
    private readonly output: OutputBuffer,
    private readonly memoryFull: () => boolean,
    private readonly meter: CpuMeter | undefined,
  ) {
    this.#runtime = module.newRuntime();
    this.#runtime.setMemoryLimit(limits.memoryBytes);
    this.#runtime.setMaxStackSize(limits.stackBytes);
    this.#runtime.setInterruptHandler(() => this.#shouldInterrupt());
    this.#context = this.#runtime.newContext();
  }

  #shouldInterrupt(): boolean {
    if (this.signal.aborted) this.#interrupted = 'aborted';
    else if (this.#sliceStart !== undefined && this.#cpuUsed() > this.limits.cpuTimeMs)
      this.#interrupted = 'cpu-time';
    return this.#interrupted !== undefined;
  }

  #cpuUsed(): number {
    return (
      this.#cpuUsedMs + (this.#sliceStart === undefined ? 0 : threadCpuMs() - this.#sliceStart)
    );
  }

  /** Runs `work` inside the interpreter, counting its time toward the CPU limit. */
  #slice<T>(work: () => T): T {
    this.#sliceStart = threadCpuMs();
    if (this.meter !== undefined) this.meter[1] = ++this.#slices;
    try {
      return work();
    } finally {
      this.#cpuUsedMs += threadCpuMs() - this.#sliceStart;
      this.#sliceStart = undefined;
      if (this.meter !== undefined) {
        this.meter[0] = this.#cpuUsedMs;
        this.meter[1] = -1;
      }
    }
  }

  async execute(code: string): Promise<ScriptOutcome> {
    const context = this.#context;
    const prelude = this.#installPrelude();
    if (prelude.type === 'failed') return prelude.outcome;
    const { finish } = prelude;

    const evaluated = this.#slice(() => context.evalCode(code, 'script.js'));
    if (evaluated.error !== undefined) return this.#failure(evaluated.error);
    const main = this.#keep(evaluated.value);

    const onAbort = () => this.#wake?.();
    this.signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (true) {
        if (this.signal.aborted) return this.#aborted();
        const jobs = this.#slice(() => this.#runtime.executePendingJobs());
        if (jobs.error !== undefined) return this.#failure(jobs.error);
        // An interrupt inside a job can end it without an error reaching here and leave the
        // script's promise pending forever: the interrupt is the outcome, never "stuck".
        const interrupted = this.#interruptedOutcome();
        if (interrupted !== undefined) return interrupted;
        const state = context.getPromiseState(main);
        if (state.type === 'fulfilled') {
          const value = this.#keep(state.value);
          const shown = this.#slice(() => context.callFunction(finish, context.undefined, value));
          if (shown.error !== undefined) return this.#failure(shown.error);
          // Only a string is read: reading any other value (`dump`) could run the script's
          // getters or `toJSON` in the host, outside the CPU limit.
          const text = this.#jsonStringOf(shown.value);
          shown.value.dispose();
          return { type: 'returned', output: this.output, value: text };
        }
        if (state.type === 'rejected') return this.#failure(state.error);
        if (this.#runtime.hasPendingJob()) continue;
        if (this.#pending.size === 0) {
          return failed(
            'stuck',
            'The script is waiting for a promise that nothing can settle (no tool call is running). Await only tool calls.',
            this.output,
          );
        }
        await new Promise<void>((resolve) => {
          this.#wake = resolve;
        });
        this.#wake = undefined;
      }
    } finally {
      this.signal.removeEventListener('abort', onAbort);
    }
  }

  /** Evaluates the prelude and hands it the host functions; returns its `finish` and `explain` functions. */
  #installPrelude():
    | { type: 'ok'; finish: QuickJSHandle }
    | { type: 'failed'; outcome: ScriptOutcome } {
    const context = this.#context;
    const factory = this.#slice(() => context.evalCode(scriptPrelude, 'prelude.js'));
    if (factory.error !== undefined)
      return { type: 'failed', outcome: this.#failure(factory.error) };
    const factoryHandle = this.#keep(factory.value);
    const call = this.#keep(context.newFunction('call', (name, json) => this.#call(name, json)));
    const print = this.#keep(
      context.newFunction('print', (level, text) => {
        const line = this.#jsonStringOf(text);
        if (line !== undefined) this.output.write(this.#stringOf(level) ?? 'log', line);
      }),
    );
    const describe = this.#keep(
      context.newFunction('describe', (json) => {
        const wanted = JSON.parse(this.#stringOf(json) ?? '[]') as unknown;
        const names = Array.isArray(wanted) ? wanted.map(String) : [];
        return context.newString(this.host.describe(names));
      }),
    );
    const names = this.#keep(context.newArray());
    this.host.names.forEach((name, index) => {
      const item = context.newString(name);
      context.setProp(names, index, item);
      item.dispose();
    });
    const result = this.#slice(() =>
      context.callFunction(factoryHandle, context.undefined, call, print, describe, names),
    );
    if (result.error !== undefined) return { type: 'failed', outcome: this.#failure(result.error) };
    const functions = this.#keep(result.value);
    const finish = this.#keep(context.getProp(functions, 0));
    this.#explain = this.#keep(context.getProp(functions, 1));
    return { type: 'ok', finish };
  }

  /** The text of a string handle; `undefined` for any other value (never converted in the host). */
  #stringOf(handle: QuickJSHandle): string | undefined {
    return this.#context.typeof(handle) === 'string' ? this.#context.getString(handle) : undefined;
  }

  /**
   * The string a JSON string handle holds (the prelude's printed lines and returned text): the
   * engine's strings reach the host as C text, cut at the first NUL, and JSON escapes it.
   */
  #jsonStringOf(handle: QuickJSHandle): string | undefined {
    const json = this.#stringOf(handle);
    if (json === undefined) return undefined;
    try {
      const value = JSON.parse(json) as unknown;
      return typeof value === 'string' ? value : undefined;
    } catch {
      return undefined;
    }
  }

  /** `hostCall(name, json)` inside the script: a promise settled when the nested call ends. */
  #call(nameHandle: QuickJSHandle, jsonHandle: QuickJSHandle): QuickJSHandle {
    const context = this.#context;
    const name = this.#stringOf(nameHandle) ?? '';
    const json = this.#stringOf(jsonHandle) ?? '';
    const deferred = context.newPromise();
    this.#pending.add(deferred);
    void this.host.call(name, json).then((envelope) => {
      if (this.#disposed) return;
      this.#pending.delete(deferred);
      let text: QuickJSHandle;
      try {
        text = context.newString(envelope);
      } catch {
        // The result does not fit in the script's memory.
        text = context.newString(
          JSON.stringify({
            ok: false,
            kind: 'failed',
            message: `The result of ${name} (${envelope.length} characters) does not fit in the script's memory limit`,
          }),
        );
      }
      deferred.resolve(text);
      text.dispose();
      deferred.dispose();
      this.#wake?.();
    });
    return deferred.handle;
  }

  #keep(handle: QuickJSHandle): QuickJSHandle {
    this.#handles.push(handle);
    return handle;
  }

  #aborted(): ScriptOutcome {
    return failed('aborted', 'The script was cancelled.', this.output);
  }

  /** The outcome when the interpreter was interrupted (aborted, or out of CPU time), if it was. */
  #interruptedOutcome(): ScriptOutcome | undefined {
    if (this.#interrupted === 'aborted' || this.signal.aborted) return this.#aborted();
    if (this.#interrupted === 'cpu-time') {
      return failed('cpu-time', cpuTimeMessage(this.limits), this.output);
    }
    return undefined;
  }

  /** The outcome for an exception thrown out of the interpreter (the handle is disposed). */
  #failure(errorHandle: QuickJSHandle): ScriptOutcome {
    const interruptedBefore = this.#interruptedOutcome();
    if (interruptedBefore !== undefined) {
      errorHandle.dispose();
      return interruptedBefore;
    }
    const error = this.#explainError(errorHandle);
    errorHandle.dispose();
    const interrupted = this.#interruptedOutcome();
    if (interrupted !== undefined) return interrupted;
    const text = describeError(error);
    // With its memory exhausted QuickJS may not even build the error: `undefined` is thrown.
    if (/out of memory/i.test(text) || (error.thrown !== undefined && this.memoryFull()))
      return failed('memory', outOfMemory(this.limits, text), this.output);
    return failed('threw', text, this.output);
  }

  /**
   * What was thrown, read by the prelude's `explain` inside the interpreter and under the CPU
   * limit: a thrown object's getters and `toJSON` are the script's code, and `dump` would run
   * them in the host with no limit (an endless getter froze the process for good).
   */
  #explainError(errorHandle: QuickJSHandle): ThrownValue {
    const explain = this.#explain;
    if (explain === undefined) return { thrown: 'an error before the script started' };
    const explained = this.#slice(() =>
      this.#context.callFunction(explain, this.#context.undefined, errorHandle),
    );
    if (explained.error !== undefined) {
      explained.error.dispose();
      return { thrown: 'a value that could not be described' };
    }
    const json = this.#stringOf(explained.value);
    explained.value.dispose();
    try {
      const parsed = JSON.parse(json ?? 'null') as unknown;
      if (parsed !== null && typeof parsed === 'object') return parsed as ThrownValue;
    } catch {
      // Not the prelude's JSON: described below as undescribable.
    }
    return { thrown: 'a value that could not be described' };
  }

  /** After a trap: the instance is garbage; late host calls are ignored and nothing is freed. */
  abandon(): void {
    this.#disposed = true;
  }

  dispose(): void {
    if (this.#disposed) return;
    this.#disposed = true;
    for (const deferred of this.#pending) deferred.dispose();
    this.#pending.clear();
    for (const handle of this.#handles) if (handle.alive) handle.dispose();
    this.#handles.length = 0;
    this.#context.dispose();
    this.#runtime.dispose();
  }
}

/** A thrown value as the prelude's `explain` reads it: a primitive's text, or an object's fields. */
interface ThrownValue {
  thrown?: unknown;
  name?: unknown;
  message?: unknown;
  stack?: unknown;
}

/** An exception from the script, as `Name: message` and the stack lines inside the script. */
function describeError(record: ThrownValue): string {
  if (typeof record.thrown === 'string') return `Uncaught ${record.thrown}`;
  const name = typeof record.name === 'string' ? record.name : 'Error';
  const message = typeof record.message === 'string' ? record.message : '';
  const frames =
    typeof record.stack === 'string'
      ? record.stack
          .split('\n')
          .filter((line) => line.includes('script.js'))
          .map((line) => line.trim())
      : [];
  return [`${name}: ${message}`, ...collapseFrames(frames)].join('\n');
}

/** Stack frames with runs of one repeated frame (recursion) shown once, at most 10 lines. */
function collapseFrames(frames: readonly string[]): string[] {
  const lines: string[] = [];
  for (let index = 0; index < frames.length; ) {
    let end = index + 1;
    while (end < frames.length && frames[end] === frames[index]) end++;
    const times = end - index;
    lines.push(`  ${frames[index]}${times > 1 ? ` (×${times})` : ''}`);
    index = end;
  }
  return lines.length > 10
    ? [...lines.slice(0, 10), `  … ${lines.length - 10} more frames`]
    : lines;
}
