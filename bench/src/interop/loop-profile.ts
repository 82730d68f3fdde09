/**
 * The interop suite's loop comparison alone, for measuring and profiling: our loop over our native
 * provider and over an AI SDK model (and the AI SDK's own `streamText` over the same model, as a
 * reference), interleaved on one local wire server; prints CPU and wall medians and paired ratios.
 *
 *   tsx src/interop/loop-profile.ts [rounds] [native,ai-sdk,ai-sdk-openai,stream-text] [tool-calls|prose]
 *
 * `ai-sdk` is `@ai-sdk/openai-compatible`, `ai-sdk-openai` is `@ai-sdk/openai`'s `.chat()` model.
 *   BENCH_PROFILE=/tmp/ai-sdk.cpuprofile tsx src/interop/loop-profile.ts 60 ai-sdk
 *
 * With `BENCH_PROFILE`, a CPU profile of the timed rounds only (after the warm-ups, so start-up and
 * module loading stay out) is written there; open it in Chrome DevTools or VS Code.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import os from 'node:os';
import {
  loopRun,
  providersAt,
  startChatServer,
  streamTextRun,
  type WorkloadName,
  wireModel,
  workloads,
} from './loop-over-ai-sdk.js';

const rounds = Number(process.argv[2] ?? 30);
const names = (process.argv[3] ?? 'native,ai-sdk,stream-text').split(',');
const workload = (process.argv[4] ?? 'tool-calls') as WorkloadName;
if (!(workload in workloads)) throw new Error(`unknown workload ${workload}`);
const warmup = 5;

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[middle] ?? 0)
    : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/** CPU ms per thread name (Linux `/proc/self/task`): the main thread vs V8's GC and compiler threads. */
function threadTimes(): Map<string, number> {
  const times = new Map<string, number>();
  try {
    for (const task of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      const key = task === String(process.pid) ? 'main thread' : name;
      times.set(key, (times.get(key) ?? 0) + (ticks * 1000) / 100);
    }
  } catch {
    // Not Linux: no per-thread figures.
  }
  return times;
}

async function main(): Promise<void> {
  const server = await startChatServer(workload);
  const { native, aiSdk, aiSdkOpenAI } = providersAt(server.url);
  const model = wireModel(server.url);
  const runs: Record<string, () => Promise<void>> = {
    native: () => loopRun(native, 'native', workload),
    'ai-sdk': () => loopRun(aiSdk, 'ai-sdk', workload),
    'ai-sdk-openai': () => loopRun(aiSdkOpenAI, 'ai-sdk-openai', workload),
    'stream-text': () => streamTextRun(model, workload),
  };
  const cpu: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  const wall: Record<string, number[]> = Object.fromEntries(names.map((name) => [name, []]));
  const loadBefore = os.loadavg()[0] ?? 0;
  const profileFile = process.env.BENCH_PROFILE;
  const session = profileFile === undefined ? undefined : new Session();
  let threadsBefore = new Map<string, number>();
  for (let round = 0; round < warmup + rounds; round++) {
    if (round === warmup) threadsBefore = threadTimes();
    if (round === warmup && session !== undefined) {
      session.connect();
      await session.post('Profiler.enable');
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
    }
    for (let offset = 0; offset < names.length; offset++) {
      const name = names[(round + offset) % names.length] as string;
      const run = runs[name];
      if (run === undefined) throw new Error(`unknown run ${name}`);
      const before = process.cpuUsage();
      const started = performance.now();
      await run();
      const elapsed = performance.now() - started;
      const used = process.cpuUsage(before);
      if (round >= warmup) {
        cpu[name]?.push((used.user + used.system) / 1000);
        wall[name]?.push(elapsed);
      }
    }
  }
  const threadsAfter = threadTimes();
  if (session !== undefined && profileFile !== undefined) {
    const { profile } = await session.post('Profiler.stop');
    writeFileSync(profileFile, JSON.stringify(profile));
    session.disconnect();
  }
  await server.close();
  const base = names[0] as string;
  for (const name of names) {
    const ratio = (values: Record<string, number[]>) =>
      median(
        (values[name] ?? []).map((value, index) => value / (values[base]?.[index] ?? value)),
      ).toFixed(3);
    console.log(
      `${name.padEnd(12)} CPU ${median(cpu[name] ?? []).toFixed(2)} ms, wall ${median(wall[name] ?? []).toFixed(2)} ms; × ${base}: ${ratio(cpu)} CPU, ${ratio(wall)} wall`,
    );
  }
  if (threadsAfter.size > 0) {
    const spent = [...threadsAfter].map(
      ([name, ms]) => `${name} ${((ms - (threadsBefore.get(name) ?? 0)) / rounds).toFixed(2)}`,
    );
    console.log(`CPU ms per round by thread: ${spent.join(', ')}`);
  }
  console.log(
    `${workload}: ${rounds} rounds after ${warmup} warm-ups; load average ${loadBefore.toFixed(1)} → ${(os.loadavg()[0] ?? 0).toFixed(1)} on ${os.cpus().length} CPUs`,
  );
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
