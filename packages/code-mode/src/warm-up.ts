import { compileScript } from './script-source.js';
import { runScriptInWorker } from './script-thread.js';

// A process pays once for code mode's start: compiling the QuickJS WebAssembly module, V8's first
// compilation of the functions a script start calls (it compiles WebAssembly functions lazily, on
// first call, and optimises the glue as it runs), and loading the TypeScript stripper. Done when
// the tool is created, that work overlaps the model's first response, so the first script starts
// about as fast as any later one. The warm-up script runs in its own instance, dropped after it:
// only the compiled code is shared with later scripts.

const warmUpScript =
  'const values: number[] = [1, 2]; console.log(values.length); return { values }';

const warmUpHost = {
  names: [],
  call: async () => JSON.stringify({ ok: false, kind: 'not-found', message: 'warm-up' }),
  describe: () => '',
};

const warmUpLimits = {
  cpuTimeMs: 1_000,
  memoryBytes: 8 * 1024 * 1024,
  stackBytes: 256 * 1024,
  maxOutputChars: 1_000,
};

/**
 * Prepares code mode's runtime (once per process; later calls return the same promise).
 * `createCodeModeTool` starts it unless told not to. Resolves when done; never rejects: a
 * failure is reported by the first script that needs what failed.
 */
export function warmUpCodeMode(): Promise<void> {
  warming ??= (async () => {
    try {
      const compiled = await compileScript(warmUpScript);
      if (compiled.ok)
        await runScriptInWorker(compiled.code, warmUpHost, warmUpLimits, neverAborted);
    } catch {
      // See above: the next script reports it.
    }
  })();
  return warming;
}

const neverAborted = new AbortController().signal;
let warming: Promise<void> | undefined;
