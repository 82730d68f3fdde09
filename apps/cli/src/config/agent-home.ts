import { homedir } from 'node:os';
import { join, resolve } from 'node:path';

/** Where the CLI keeps its state: `AGENT_HOME`, else `~/.agent`. */
export function agentHome(): string {
  const configured = process.env.AGENT_HOME;
  return configured !== undefined && configured !== ''
    ? resolve(configured)
    : join(homedir(), '.agent');
}
