import { homedir, userInfo } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import { CliError } from './cli-error.js';

/**
 * `AGENT_HOME` with a leading `~` expanded (a quoted `"~/.agent"` in a shell profile is not
 * expanded by the shell), else `~/.agent`; undefined when neither is an absolute path. A relative
 * one would be read from whatever folder the CLI starts in, so a project's own `.agent/` or `~/`
 * folder would be taken for the user's settings — hooks run without the trust question.
 */
export function findAgentHome(): string | undefined {
  const configured = process.env.AGENT_HOME;
  if (configured !== undefined && configured !== '') {
    if (configured === '~' || configured.startsWith('~/')) {
      const home = homedir();
      return isAbsolute(home) ? join(home, configured.slice(1)) : undefined;
    }
    return isAbsolute(configured) ? resolve(configured) : undefined;
  }
  const home = homedir();
  return isAbsolute(home) ? join(home, '.agent') : undefined;
}

/** Where the CLI keeps its state: `AGENT_HOME`, else `~/.agent` (see {@link findAgentHome}). */
export function agentHome(): string {
  const home = findAgentHome();
  // settleHomeVariables has refused this at start; a library caller gets the same sentence.
  if (home === undefined) throw new CliError(relativeHomeProblem());
  return home;
}

/**
 * Run once at start, before anything reads a home: an empty or relative `HOME` (a cron job, a
 * service unit, `HOME= agent …`) is replaced by the user's home from the user database, said in
 * the returned notice; a relative `AGENT_HOME` is refused (a `~` in it is expanded). Without
 * this, `HOME=` made `./.agent/settings.json` — the project's file — the user's settings.
 */
export function settleHomeVariables(): string | undefined {
  let notice: string | undefined;
  const home = process.env.HOME;
  if (process.platform !== 'win32' && home !== undefined && !isAbsolute(home)) {
    const recorded = recordedHome();
    if (recorded === undefined) throw new CliError(relativeHomeProblem());
    process.env.HOME = recorded;
    notice = `HOME is ${describeValue(home)}: using ${recorded}, your home in the user database`;
  }
  const configured = process.env.AGENT_HOME;
  if (configured !== undefined && configured !== '') {
    const found = findAgentHome();
    if (found === undefined) throw new CliError(relativeHomeProblem());
    // The tools' processes and hooks see the same folder the CLI uses.
    process.env.AGENT_HOME = found;
  }
  return notice;
}

function recordedHome(): string | undefined {
  try {
    const home = userInfo().homedir;
    return isAbsolute(home) ? home : undefined;
  } catch {
    // No entry for this uid (a container's arbitrary user): nothing to fall back to.
    return undefined;
  }
}

function describeValue(value: string): string {
  return value === '' ? 'empty' : `"${value}", not an absolute path`;
}

function relativeHomeProblem(): string {
  const configured = process.env.AGENT_HOME;
  const underHome = configured === '~' || configured?.startsWith('~/') === true;
  if (configured !== undefined && configured !== '' && !underHome)
    return `AGENT_HOME is ${describeValue(configured)}: it would be read from each folder the CLI starts in (a project's files taken for your settings). Set it to a full path, e.g. AGENT_HOME=$HOME/.agent`;
  return `HOME is ${describeValue(process.env.HOME ?? '')} and the user database names no home for you: set HOME to your home folder, or AGENT_HOME to a folder of yours (a full path)`;
}
