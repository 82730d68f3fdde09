/**
 * Code mode's start-up, measured in fresh Node processes (`process.execPath`, the built packages),
 * so that "cold" means what a user's process pays and not what this bench's process has already
 * loaded. Two probes, each run `rounds` times, medians reported:
 * - `cold`: the tool is created without warm-up and a script runs at once — the worst case (a
 *   model that answers instantly): compile QuickJS, load the TypeScript stripper, first instance.
 * - `warmed`: the tool is created (its warm-up starts in the background) and the probe waits for
 *   the warm-up, as the model's first response would, then runs the first script and 20 more.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/** Medians over the rounds, in ms. */
export interface StartUpFigures {
  rounds: number;
  /** `import('@agent/code-mode')` (with `@agent/core`) in a fresh process. */
  importMs: number;
  /** The first script of a process when nothing was warmed up. */
  coldFirstScriptMs: number;
  /** The background warm-up started by `createCodeModeTool` (off the critical path). */
  warmUpMs: number;
  /** The first script once the warm-up is done. */
  warmedFirstScriptMs: number;
  /** Each later script (`return 1` end to end), median of 20 per process. */
  perScriptMs: number;
}

const probe = `
const started = performance.now();
const core = await import('@agent/core');
const codeMode = await import('@agent/code-mode');
const importMs = performance.now() - started;
const warmed = process.argv[1] === 'warmed';
let at = performance.now();
const tool = codeMode.createCodeModeTool({ tools: [], warmUp: warmed });
let warmUpMs = 0;
if (warmed) {
  await codeMode.warmUpCodeMode();
  warmUpMs = performance.now() - at;
}
const run = async () => {
  const begin = performance.now();
  const message = await core.executeTool(tool, { script: 'return 1' });
  if (message.isError) throw new Error(JSON.stringify(message.content));
  return performance.now() - begin;
};
const firstScriptMs = await run();
const later = [];
for (let index = 0; index < 20; index++) later.push(await run());
later.sort((a, b) => a - b);
console.log(JSON.stringify({ importMs, warmUpMs, firstScriptMs, perScriptMs: later[10] }));
`;

interface ProbeResult {
  importMs: number;
  warmUpMs: number;
  firstScriptMs: number;
  perScriptMs: number;
}

function runProbe(mode: 'cold' | 'warmed'): ProbeResult {
  const benchDirectory = fileURLToPath(new URL('../..', import.meta.url));
  const output = execFileSync(process.execPath, ['--input-type=module', '-e', probe, mode], {
    cwd: benchDirectory,
    encoding: 'utf8',
  });
  return JSON.parse(output.trim().split('\n').at(-1) ?? '{}') as ProbeResult;
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] ?? Number.NaN;
}

/** Runs both probes `rounds` times each, alternating, in fresh processes. */
export function measureStartUp(rounds = 5): StartUpFigures {
  const cold: ProbeResult[] = [];
  const warmed: ProbeResult[] = [];
  for (let round = 0; round < rounds; round++) {
    cold.push(runProbe('cold'));
    warmed.push(runProbe('warmed'));
  }
  return {
    rounds,
    importMs: median([...cold, ...warmed].map((result) => result.importMs)),
    coldFirstScriptMs: median(cold.map((result) => result.firstScriptMs)),
    warmUpMs: median(warmed.map((result) => result.warmUpMs)),
    warmedFirstScriptMs: median(warmed.map((result) => result.firstScriptMs)),
    perScriptMs: median([...cold, ...warmed].map((result) => result.perScriptMs)),
  };
}
