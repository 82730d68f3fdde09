/**
 * Runs one implementation's overhead workload many times with no forced GC, for profiling:
 *
 *   node --cpu-prof --cpu-prof-dir=/tmp/prof --import tsx src/loop-overhead/profile.ts ours 100
 *
 * Prints the median wall time per run and per tool call.
 */
import type { Implementation, ImplementationId } from './implementation.js';
import { implementationIds } from './implementation.js';
import { probe, totalCalls } from './workload.js';

async function load(id: ImplementationId): Promise<Implementation> {
  if (id === 'ours') return (await import('./ours.js')).ours;
  if (id === 'pi') return (await import('./pi.js')).pi;
  const { aiStream, aiGenerate } = await import('./ai-sdk.js');
  return id === 'ai-stream' ? aiStream : aiGenerate;
}

async function main(): Promise<void> {
  const id = process.argv[2] as ImplementationId;
  if (!implementationIds.includes(id))
    throw new Error(`usage: profile.ts <${implementationIds.join('|')}> [runs]`);
  const runs = Number(process.argv[3] ?? 50);
  const implementation = await load(id);
  const times: number[] = [];
  for (let index = 0; index < runs; index++) {
    probe.reset();
    const started = performance.now();
    await implementation.runOverhead();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const median = times[Math.floor(times.length / 2)] ?? Number.NaN;
  console.log(
    `${implementation.label}: median ${median.toFixed(1)} ms per run, ${((median * 1000) / totalCalls).toFixed(2)} µs per tool call (${runs} runs)`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
