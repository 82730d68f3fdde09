// The interop suite's shared workload: the loop-overhead calls (distinct ~58-character argument
// JSON per call, the no-op tool that checks it got typed arguments), fewer turns per run.
import { defineTool } from '@agent/core';
import {
  callsPerTurn,
  finalText,
  type NoopArgs,
  noopInput,
  overheadScript,
  probe,
} from '../loop-overhead/workload.js';

/** Tool-calling turns per run (each of `callsPerTurn` calls), then the final text. */
export const interopTurns = 50;
export const interopCalls = interopTurns * callsPerTurn;
export const interopScript = overheadScript.slice(0, interopTurns);
export { finalText, noopInput, probe };

/** Our no-op tool (zod, as a user writes it), for the adapters. */
export function ourNoopTool() {
  return defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: noopInput,
    execute: async (input: NoopArgs) => {
      probe.hit(input);
      return 'ok';
    },
  });
}

/** Throws unless the run executed every call. */
export function checkCalls(label: string, expected: number): void {
  if (probe.calls !== expected)
    throw new Error(`${label}: executed ${probe.calls} tool calls, expected ${expected}`);
}
