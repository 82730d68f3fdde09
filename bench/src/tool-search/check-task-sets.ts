/**
 * Checks the evaluation sets of `tool_search` without running any ranking: every expected name is
 * a tool of the task's catalogue (as `catalogues.ts` loads it), no task text repeats within or
 * across sets, and each frozen set says how many of its tasks are indirect. Exits 1 on a problem.
 * Run: `pnpm --filter @agent/bench run check:tool-search-sets`.
 */
import { fileURLToPath } from 'node:url';
import { directoryTools, githubTools, stripeTools } from './catalogues.js';
import { heldOutTasks } from './held-out-tasks.js';
import { neverSeenTasks } from './never-seen-tasks.js';
import { sealedTasks } from './sealed-tasks.js';
import { retrievalTasks } from './tasks.js';

interface CheckedTask {
  spec: string;
  kind?: 'direct' | 'indirect';
  task: string;
  expected: readonly string[];
}

/** The sets by name. */
const sets: Record<string, readonly CheckedTask[]> = {
  tuned: retrievalTasks,
  'never-seen': neverSeenTasks,
  'held-out': heldOutTasks,
  sealed: sealedTasks,
};

/** The problems found: unknown expected names, repeated task texts. */
export function checkTaskSets(): string[] {
  const problems: string[] = [];
  const names = new Map<string, ReadonlySet<string>>();
  const toolNames = (spec: string): ReadonlySet<string> => {
    let found = names.get(spec);
    if (found === undefined) {
      const tools =
        spec === 'github'
          ? githubTools()
          : spec === 'stripe'
            ? stripeTools()
            : directoryTools(spec);
      found = new Set(tools.map((tool) => tool.name));
      names.set(spec, found);
    }
    return found;
  };
  const seen = new Map<string, string>();
  for (const [set, tasks] of Object.entries(sets)) {
    for (const task of tasks) {
      if (task.expected.length === 0) problems.push(`${set}: "${task.task}" expects nothing`);
      for (const name of task.expected)
        if (!toolNames(task.spec).has(name))
          problems.push(`${set}: "${task.task}" expects ${name}, not a tool of ${task.spec}`);
      const key = `${task.spec} ${task.task.toLowerCase()}`;
      const earlier = seen.get(key);
      if (earlier !== undefined)
        problems.push(`${set}: "${task.task}" repeats a task of ${earlier}`);
      seen.set(key, set);
    }
  }
  return problems;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const problems = checkTaskSets();
  for (const [set, tasks] of Object.entries(sets)) {
    const indirect = tasks.filter((task) => task.kind === 'indirect').length;
    const specs = new Set(tasks.map((task) => task.spec));
    console.log(
      `${set}: ${tasks.length} tasks over ${specs.size} catalogues, ${indirect} indirect (${Math.round((100 * indirect) / tasks.length)}%)`,
    );
  }
  for (const problem of problems) console.error(`problem: ${problem}`);
  if (problems.length > 0) process.exit(1);
}
