/**
 * Self time of V8 CPU profiles (`.cpuprofile`) by package, side by side, as a markdown table:
 *
 *   tsx src/profile-by-package.ts <runs> <a.cpuprofile>[@<ms>] [<b.cpuprofile>[@<ms>] …]
 *
 * A file given as `a.cpuprofile@36.4` is counted by samples instead, scaled so its busy total is
 * 36.4 ms a run — the main thread's CPU time a round as `loop-profile.ts` prints it. Under load
 * that is the figure to trust: a sample's time delta is wall time, and a run that was descheduled
 * more (at a higher load) gets more of it.
 *
 * `runs` divides every figure (ms per run). Buckets: the npm package a function's file is in,
 * our workspace packages, Node's internals by area (web streams, undici, http/net, streams),
 * GC, and V8's native code. Idle time is left out. Profiles are sampled wall time of the main
 * thread: V8's helper threads (concurrent GC, compilation) are not in them.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
}

interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** The bucket of one profile node: where its self time is counted. */
function bucketOf({ callFrame: { url, functionName } }: ProfileNode): string {
  if (url === '') {
    if (functionName === '(garbage collector)') return 'GC (main thread)';
    if (functionName === '(idle)') return 'idle';
    if (functionName === '(program)') return '(program)';
    return 'V8/Node native code';
  }
  if (url.startsWith('node:internal/deps/')) return `node: ${url.split('/')[3]}`;
  if (url.startsWith('node:internal/webstreams')) return 'node: web streams';
  if (url.startsWith('node:internal/streams') || url === 'node:stream') return 'node: streams';
  if (url.startsWith('node:inspector')) return 'the profiler';
  if (url.startsWith('node:'))
    return /http|net|stream_base|dns/.test(url) ? 'node: http/net' : 'node: other';
  if (url.startsWith('wasm://')) return 'wasm (undici llhttp)';
  const dependency = url.match(/node_modules\/\.pnpm\/[^/]+\/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (dependency?.[1] !== undefined) return dependency[1];
  const workspace = url.match(/\/(packages|apps|tooling|bench)\/([^/]+)/);
  if (workspace?.[1] === 'bench') return 'the bench';
  if (workspace?.[1] === 'tooling') return 'wire server (the bench)';
  if (workspace?.[2] !== undefined) return `@agent/${workspace[2]}`;
  return url;
}

/** Self time per bucket, in ms (by samples, scaled to `cpuMsTotal`, when that is given). */
function selfTimes(argument: string, runs: number): Map<string, number> {
  const at = argument.lastIndexOf('@');
  const file = at > 0 ? argument.slice(0, at) : argument;
  const cpuMsPerRun = at > 0 ? Number(argument.slice(at + 1)) : undefined;
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
  const times = new Map<string, number>();
  profile.samples.forEach((id, index) => {
    const node = nodes.get(id);
    if (node === undefined) return;
    const bucket = bucketOf(node);
    const ms = cpuMsPerRun === undefined ? (profile.timeDeltas[index] ?? 0) / 1000 : 1;
    times.set(bucket, (times.get(bucket) ?? 0) + ms);
  });
  times.delete('idle');
  if (cpuMsPerRun !== undefined) {
    const samples = [...times.values()].reduce((sum, count) => sum + count, 0);
    for (const [bucket, count] of times) times.set(bucket, (count / samples) * cpuMsPerRun * runs);
  }
  return times;
}

function main(): void {
  const [runsText, ...files] = process.argv.slice(2);
  const runs = Number(runsText);
  if (!(runs > 0) || files.length === 0)
    throw new Error('usage: profile-by-package.ts <runs> <a.cpuprofile> [<b.cpuprofile> …]');
  const columns = files.map((file) => selfTimes(file, runs));
  const totals = columns.map((times) => [...times.values()].reduce((sum, ms) => sum + ms, 0));
  const buckets = [...new Set(columns.flatMap((times) => [...times.keys()]))]
    .map((bucket) => ({
      bucket,
      peak: Math.max(...columns.map((times) => times.get(bucket) ?? 0)),
    }))
    .filter(({ peak }) => peak / runs >= 0.05)
    .sort((a, b) => b.peak - a.peak);
  const cell = (ms: number, total: number) =>
    ms === 0 ? '–' : `${(ms / runs).toFixed(2)} (${((100 * ms) / total).toFixed(0)} %)`;
  console.log(
    `| self time, ms per run | ${files.map((file) => path.basename(file)).join(' | ')} |`,
  );
  console.log(`| --- |${files.map(() => ' --- |').join('')}`);
  for (const { bucket } of buckets) {
    const cells = columns.map((times, index) => cell(times.get(bucket) ?? 0, totals[index] ?? 1));
    console.log(`| ${bucket} | ${cells.join(' | ')} |`);
  }
  console.log(
    `| **main thread, busy** | ${totals.map((ms) => `**${(ms / runs).toFixed(2)}**`).join(' | ')} |`,
  );
}

main();
