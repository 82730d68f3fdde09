import type { MessagePort } from 'node:worker_threads';
import type { ScriptLimits } from './script-runtime.js';

// The messages between a script worker (script-worker.ts) and its parent (script-thread.ts), in
// a file of their own: the parent imports them without the worker's code.

/** What the parent gives each worker at its start. */
export interface ScriptWorkerData {
  marker: typeof scriptWorkerMarker;
  /** The compiled QuickJS module (shared, not recompiled). */
  wasmModule: object;
}

/** One script to run (a worker may run several at once, each in its own QuickJS instance). */
export interface ScriptWorkerRun {
  type: 'run';
  /** Names the run in the messages about it. */
  runId: number;
  code: string;
  names: readonly string[];
  limits: ScriptLimits;
  /** `Float64Array` over it: `[0]` CPU ms used, `[1]` the running slice's number or -1, `[2]` output characters dropped. */
  meter: SharedArrayBuffer;
  /** `Int32Array` over it: `[0]` set to 1 when a `declarations(…)` answer is on `describePort`. */
  control: SharedArrayBuffer;
  /** `declarations(…)` is synchronous in the script: asked here, answered by the parent at once. */
  describePort: MessagePort;
}

/** What a worker sends its parent. */
export type ScriptWorkerMessage =
  | { type: 'call'; runId: number; id: number; name: string; json: string }
  | { type: 'print'; runId: number; line: string }
  | {
      type: 'done';
      runId: number;
      outcome:
        | { type: 'returned'; value: string | undefined }
        | { type: 'failed'; reason: string; message: string };
    };

/** What the parent sends a worker during a run. */
export interface ScriptWorkerReply {
  type: 'reply';
  id: number;
  envelope: string;
}

/** Marks the worker data as ours (the module checks it before doing anything). */
export const scriptWorkerMarker = 'agent-code-mode-script-worker/1';

/** A `declarations(…)` question on the describe port. */
export interface DescribeRequest {
  id: number;
  names: readonly string[];
}

/** Its answer: the TypeScript declarations. */
export interface DescribeAnswer {
  id: number;
  text: string;
}
