// Type-checks every consumer's README example in one compiler run per module resolution
// (nodenext and bundler), the two runs side by side. One program holds all the examples, yet
// each is still checked against its own project's install: imports resolve from the file's own
// directory, and each project's package.json says it is an ES module. tsc parses a library that
// several projects installed at the same version once, so the run costs little more than one
// project's — where a compiler per project and mode paid for start-up and the libraries each time.
import { writeFileSync } from 'node:fs';
import path from 'node:path';

/** The module settings a user's project may have; each example must compile under both. */
export const moduleSettings = {
  nodenext: { module: 'nodenext', moduleResolution: 'nodenext' },
  bundler: { module: 'preserve', moduleResolution: 'bundler' },
};

/**
 * Type-checks `examples` (absolute paths of `example.ts` files, each in its own project under
 * `directory`); resolves with the errors of each file, by path (an empty map when all compile).
 * `run` runs a command and rejects with its output when it fails.
 */
export async function typeCheckExamples({ directory, examples, tsc, typeRoots, run }) {
  const errors = new Map();
  await Promise.all(
    Object.entries(moduleSettings).map(async ([name, settings]) => {
      const config = {
        compilerOptions: {
          ...settings,
          target: 'es2023',
          lib: ['es2023', 'esnext.disposable'],
          strict: true,
          noEmit: true,
          // Each example is a module of its own project, never a script sharing one global scope.
          moduleDetection: 'force',
          // Declaration files themselves are compiled by the API report check; here, the examples against them.
          skipLibCheck: true,
          types: ['node'],
          typeRoots,
        },
        files: examples.map((file) => path.relative(directory, file)),
      };
      const configFile = `tsconfig.${name}.json`;
      writeFileSync(path.join(directory, configFile), JSON.stringify(config, null, 2));
      try {
        await run(process.execPath, [tsc, '-p', configFile, '--pretty', 'false'], {
          cwd: directory,
        });
      } catch (error) {
        const attributed = attribute(error.message, directory, examples);
        if (attributed.size === 0) throw new Error(`type-check (${name}): ${error.message}`);
        for (const [file, lines] of attributed)
          errors.set(file, [...(errors.get(file) ?? []), `(${name}) ${lines.join('\n')}`]);
      }
    }),
  );
  return errors;
}

/** tsc's `file(line,col): error …` lines (and their indented continuations) by example file. */
function attribute(output, directory, examples) {
  const byFile = new Map();
  let current;
  for (const line of output.split('\n')) {
    const located = /^(.+?)\(\d+,\d+\): error /.exec(line);
    if (located !== null) {
      const file = path.resolve(directory, located[1]);
      current = examples.includes(file) ? file : undefined;
    }
    if (current !== undefined && (located !== null || /^\s/.test(line)))
      byFile.set(current, [...(byFile.get(current) ?? []), line]);
  }
  return byFile;
}
