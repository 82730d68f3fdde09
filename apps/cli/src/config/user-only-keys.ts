/**
 * Settings only the user's own file may hold. A project file (trusted or not) that sets one has
 * that key ignored with a one-line notice naming the file and the key, and the session goes on —
 * it used to stop the start, so a cloned repository (or one written for a newer version) kept the
 * CLI from starting in it at all; the peers ignore such keys the same way.
 */
import { join } from 'node:path';
import type { HooksConfig } from '@agent/command-hooks';
import type { SettingsFile } from './settings-file.js';

/** Each user-only key, and why a workspace may not set it (said in the notice). */
const userOnlyKeys = {
  passEnv: 'a workspace cannot hand your credentials to its tools',
  webFetchPrivateHosts: 'a workspace cannot open your local network to web_fetch',
  compaction: 'what a session pays for summaries is yours to tune',
  codeMode: 'how the model works with your tools is your choice',
  sandboxProtect: 'a workspace cannot weaken the sandbox its commands run in',
  hooksSandbox: 'a workspace cannot take hooks out of the sandbox',
  hooksSandboxNetwork: 'a workspace cannot give hooks the network',
  mcpServe: 'how much one token may run on your machine is yours to size',
  sessions: 'a workspace does not decide how long your sessions are kept',
} as const satisfies Partial<Record<keyof SettingsFile, string>>;

/** The user-only keys (for tests and documentation). */
export const userOnlyKeyNames = Object.keys(userOnlyKeys) as (keyof typeof userOnlyKeys)[];

/** A project file without what it may not set, and one notice line per key left out. */
export interface ProjectFileChecked {
  file: SettingsFile;
  ignored: string[];
}

/**
 * `file` (a project's settings file at `path`) without the keys only the user's settings
 * (`<home>/settings.json`) may hold: each user-only key, a hook's own `sandbox`, and the items of
 * `tools` that would add tools (removing ones stay: they only narrow).
 */
export function withoutUserOnlyKeys(
  file: SettingsFile,
  path: string,
  home: string,
): ProjectFileChecked {
  const yours = join(home, 'settings.json');
  const ignored: string[] = [];
  const kept: SettingsFile = { ...file };
  for (const [key, why] of Object.entries(userOnlyKeys) as [keyof typeof userOnlyKeys, string][]) {
    if (kept[key] === undefined) continue;
    delete kept[key];
    ignored.push(
      `agent: ignored "${key}" in ${path}: only your settings (${yours}) set it — ${why}`,
    );
  }
  if (kept.hooks !== undefined) {
    const { hooks, dropped } = hooksWithoutSandbox(kept.hooks);
    kept.hooks = hooks;
    for (const where of dropped)
      ignored.push(
        `agent: ignored "hooks.${where}.sandbox" in ${path}: only your settings (${yours}) set it — a workspace cannot take a hook out of the sandbox`,
      );
  }
  if (kept.tools !== undefined) {
    const adding = kept.tools.filter((item) => !item.startsWith('-'));
    if (adding.length > 0) {
      kept.tools = kept.tools.filter((item) => item.startsWith('-'));
      if (kept.tools.length === 0) delete kept.tools;
      ignored.push(
        `agent: ignored ${adding.map((item) => JSON.stringify(item)).join(', ')} of "tools" in ${path}: a project file may only remove tools ("-name"); adding them is yours (--tools, or "tools" in ${yours})`,
      );
    }
  }
  return { file: kept, ignored };
}

/** The hooks with no `sandbox` of their own, and where one was (`Stop[0].hooks[1]`). */
function hooksWithoutSandbox(hooks: HooksConfig): { hooks: HooksConfig; dropped: string[] } {
  const dropped: string[] = [];
  const result: HooksConfig = {};
  for (const [event, entries] of Object.entries(hooks) as [
    keyof HooksConfig,
    NonNullable<HooksConfig[keyof HooksConfig]>,
  ][]) {
    result[event] = entries.map((entry, i) => ({
      ...entry,
      hooks: entry.hooks.map((hook, j) => {
        if (hook.sandbox === undefined) return hook;
        dropped.push(`${event}[${i}].hooks[${j}]`);
        const { sandbox: _sandbox, ...rest } = hook;
        return rest;
      }),
    }));
  }
  return { hooks: result, dropped };
}
