/**
 * Where every Python the CLI starts keeps its compiled bytecode: `$AGENT_HOME/cache/python`
 * (`PYTHONPYCACHEPREFIX`), not the `__pycache__` folders of the workspace. Python runs a module
 * from the `.pyc` there when its header says it matches the source — and an "unchecked-hash" one
 * without looking at the source at all. A sandboxed command wrote
 * `scripts/hooks/__pycache__/helpers.cpython-311.pyc`: the trusted hook's pinned `helpers.py`
 * was unchanged, and the hook ran the planted code as the user, outside the sandbox. With the
 * prefix set Python neither reads nor writes those folders; `$AGENT_HOME` is hidden from every
 * sandbox (bash, hooks, servers), so nothing sandboxed can write the cache the others read.
 */
import { join } from 'node:path';
import { agentHome } from './agent-home.js';

/**
 * Sets `PYTHONPYCACHEPREFIX` in `env` to `<home>/cache/python` — over the user's or a trusted
 * project's value: one in the workspace would reopen the hole, and where bytecode is cached
 * changes nothing a program does.
 */
export function keepPythonBytecodePrivate(
  env: NodeJS.ProcessEnv = process.env,
  home = agentHome(),
): void {
  env.PYTHONPYCACHEPREFIX = join(home, 'cache', 'python');
}
