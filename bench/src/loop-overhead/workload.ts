import * as z from 'zod';

/** Tool-calling turns per run. */
export const turns = 200;
/** Tool calls per turn. */
export const callsPerTurn = 8;
/** Tool calls per overhead run. */
export const totalCalls = turns * callsPerTurn;
/** Characters per streamed argument delta (the scripted provider's default chunk size). */
export const chunkSize = 16;
/** Calls in the one turn of the parallel-latency run. */
export const parallelCalls = 64;
/** How long each parallel call waits, in ms. */
export const parallelWaitMs = 100;
/** Text of the final assistant turn. */
export const finalText = 'All done.';

/** One scripted tool call: id, wire name and the raw JSON argument text the model streams. */
export interface WorkloadCall {
  id: string;
  name: string;
  arguments: string;
}

/** The arguments of the no-op tool, as a zod schema (ours and the AI SDK share it). */
export const noopInput = z.object({
  path: z.string(),
  line: z.number().int(),
  flag: z.boolean(),
});

/** The same arguments as a plain JSON Schema, for frameworks that take one. */
export const noopJsonSchema = {
  type: 'object',
  properties: {
    path: { type: 'string' },
    line: { type: 'integer' },
    flag: { type: 'boolean' },
  },
  required: ['path', 'line', 'flag'],
  additionalProperties: false,
} as const;

/** Distinct argument text per call, so no framework can cache a parse. */
function callArguments(turn: number, index: number): string {
  return JSON.stringify({
    path: `src/module-${turn}/file-${index}.ts`,
    line: turn * 10 + index,
    flag: index % 2 === 0,
  });
}

/** The calls of every tool turn of the overhead run: `turns` × `callsPerTurn`. */
export const overheadScript: readonly (readonly WorkloadCall[])[] = Array.from(
  { length: turns },
  (_, turn) =>
    Array.from({ length: callsPerTurn }, (_, index) => ({
      id: `call_${turn}_${index}`,
      name: 'noop',
      arguments: callArguments(turn, index),
    })),
);

/** Mean length of the argument JSON of an overhead call, in characters. */
export const meanArgumentChars = Math.round(
  overheadScript.flat().reduce((sum, call) => sum + call.arguments.length, 0) / totalCalls,
);

/** The single tool turn of the parallel run. */
export const parallelScript: readonly (readonly WorkloadCall[])[] = [
  Array.from({ length: parallelCalls }, (_, index) => ({
    id: `wait_${index}`,
    name: 'wait',
    arguments: JSON.stringify({ path: `wait-${index}`, line: index, flag: true }),
  })),
];

/** Splits text into the deltas a streaming provider would send. */
export function chunks(text: string): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < text.length; offset += chunkSize)
    out.push(text.slice(offset, offset + chunkSize));
  return out;
}

/** Arguments as every framework hands them to the tool after parsing and validation. */
export interface NoopArgs {
  path: string;
  line: number;
  flag: boolean;
}

/**
 * What each tool execution reports to: counts calls, checks that the arguments arrived parsed
 * and typed, and (in the memory run only) samples the heap.
 */
export const probe = {
  calls: 0,
  sampleHeap: false,
  peakHeapUsed: 0,
  reset(sampleHeap = false): void {
    this.calls = 0;
    this.sampleHeap = sampleHeap;
    this.peakHeapUsed = 0;
  },
  hit(args: NoopArgs): void {
    if (typeof args.line !== 'number' || typeof args.path !== 'string') {
      throw new Error(`tool received unparsed arguments: ${JSON.stringify(args)}`);
    }
    this.calls++;
    if (this.sampleHeap) this.sample();
  },
  sample(): void {
    const used = process.memoryUsage().heapUsed;
    if (used > this.peakHeapUsed) this.peakHeapUsed = used;
  },
};

/** Throws unless the run executed every call and ended with the final text. */
export function checkRun(label: string, expectedCalls: number, text: string | undefined): void {
  if (probe.calls !== expectedCalls)
    throw new Error(`${label}: executed ${probe.calls} tool calls, expected ${expectedCalls}`);
  if (text !== finalText) throw new Error(`${label}: final text was ${JSON.stringify(text)}`);
}

/** Resolves after `ms` (the parallel tool's body). */
export function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
