/**
 * The `agent` executable, kept as small as possible: `--version` is answered from versions fixed
 * at build time; anything else first keeps credentials out of the environ block (a re-execution,
 * see config/credential-handover.ts), makes `$AGENT_HOME` private (config/private-home.ts), then
 * turns on Node's compile cache (V8's code cache on disk, under `$AGENT_HOME/cache/compile`, so a
 * later start skips compiling the bundle) and loads the CLI.
 */
import module from 'node:module';
import { join } from 'node:path';
import { findAgentHome } from './config/agent-home.js';
import { outputProblem } from './config/system-errors.js';
import { versionsText } from './config/version.js';

// Node's diagnostic report (NODE_OPTIONS' --report-on-signal, --report-on-fatalerror,
// --report-uncaught-exception; written in the working directory by default) lists the
// environment: the heap's, where the CLI keeps its keys after the handover below. With
// --report-on-signal any process of the user had one written (SIGUSR2). Reports leave it out
// (Node ≥ 22.13; before, there is no such setting to assign).
if ('excludeEnv' in process.report) process.report.excludeEnv = true;
// SIGUSR1 starts Node's inspector on 127.0.0.1 unless the process listens for it: then any user of
// the machine could connect, read the keys and run code as the CLI's user — and any process of
// the user can send it (a child too, which Yama's ptrace_scope 1 keeps from the CLI's memory).
// `--inspect` given on purpose still works.
process.on('SIGUSR1', () => undefined);

const argv = process.argv.slice(2);
if (argv.length === 1 && (argv[0] === '--version' || argv[0] === '-v')) {
  // A reader gone (`agent -v | head -c0`) ends it quietly; an output that cannot be written
  // (`> v.txt` on a full disk) is said in a line, exit 1 — both were Node's stack (main.ts does
  // the same for everything else).
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') return;
    process.stderr.write(`agent: ${outputProblem(error)}\n`);
    process.exitCode = 1;
  });
  process.stdout.write(versionsText);
} else if (
  (await argumentsInLocale()) &&
  (await coreDumpsOff()) &&
  (await credentialsHandedOver()) &&
  (await homeMadePrivate())
) {
  enableCompileCache();
  await import('./main.js');
}

/**
 * Creates `$AGENT_HOME` private and makes private what of it others may write
 * (config/private-home.ts), before Node's compile cache creates it with the umask; false (exit
 * code 1, said) when part of it belongs to another user.
 */
async function homeMadePrivate(): Promise<boolean> {
  // A relative home is refused by main.ts, which says what to set.
  const home = findAgentHome();
  if (home === undefined) return true;
  const { privateHomeNotice, securePrivateHome } = await import('./config/private-home.js');
  try {
    const notice = privateHomeNotice(home, securePrivateHome(home));
    if (notice !== undefined) process.stderr.write(`agent: ${notice}\n`);
    return true;
  } catch (error) {
    process.stderr.write(`agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return false;
  }
}

/**
 * Reads back in the locale's character set the arguments Node could not read as UTF-8
 * (config/locale-arguments.ts), before the handover re-executes with them; true always.
 */
async function argumentsInLocale(): Promise<boolean> {
  // Loaded only when an argument holds what UTF-8 could not read.
  if (!process.argv.some((argument) => argument.includes('\ufffd'))) return true;
  const { readArgumentsInLocale } = await import('./config/locale-arguments.js');
  readArgumentsInLocale();
  return true;
}

/**
 * Sets the core-file limits to 0 before any key is read (config/core-dumps.ts): a core dump the
 * model had another process of the user provoke held them. Says so when it cannot; true always.
 */
async function coreDumpsOff(): Promise<boolean> {
  // Once: the limits hold across the re-execution below.
  if (process.env.AGENT_CREDENTIAL_HANDOVER !== undefined) return true;
  const { turnOffCoreDumps } = await import('./config/core-dumps.js');
  const notice = turnOffCoreDumps();
  if (notice !== undefined) process.stderr.write(`agent: ${notice}\n`);
  return true;
}

/**
 * Keeps the credentials out of this process's environ block (config/credential-handover.ts): a
 * first start holding some re-executes itself without them and does not come back here; false
 * (exit code 1, said) when a second start cannot take them back.
 */
async function credentialsHandedOver(): Promise<boolean> {
  const { handOverCredentials } = await import('./config/credential-handover.js');
  try {
    handOverCredentials();
    return true;
  } catch (error) {
    process.stderr.write(`agent: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
    return false;
  }
}

function enableCompileCache(): void {
  // NODE_COMPILE_CACHE (a directory) or NODE_DISABLE_COMPILE_CACHE are Node's own and win.
  if (process.env.NODE_COMPILE_CACHE !== undefined) return;
  if (process.env.NODE_DISABLE_COMPILE_CACHE !== undefined) return;
  // No relative home (HOME=, AGENT_HOME=.agent): the cache would be the project's folder, and
  // code read from there. main.ts then says what is wrong.
  const home = findAgentHome();
  if (home === undefined) return;
  const dir = join(home, 'cache', 'compile');
  try {
    // Node ≥ 22.1; a directory that cannot be written only means no cache.
    module.enableCompileCache?.(dir);
  } catch {
    // No cache: the CLI starts all the same, only slower.
  }
}
