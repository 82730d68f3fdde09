/**
 * Bench suite for code mode (`@agent/code-mode`): five scripted multi-step tasks run both ways
 * with the same decisions — direct tool calls (each result goes back to the model) vs one
 * `run_script` call making the same calls — counting what is sent to the model (tokens estimated
 * as characters / 4 of each request's JSON: system prompt, tool definitions, messages) and model
 * round trips; then the cost of one nested call vs one direct call, and runtime start-up.
 */
import { createCodeModeTool } from '@agent/code-mode';
import {
  Agent,
  type AnyAgentTool,
  defineTool,
  executeTool,
  type ProviderRequest,
} from '@agent/core';
import { createScriptedProvider, type ScriptedStep } from '@agent/core/testing';
import * as z from 'zod';
import { measureStartUp } from '../code-mode/start-up.js';
import type { BenchSection } from '../types.js';

// Deterministic data: a workspace of 300 files, 150 issues, 60 customers, 20 users with orders.
const files = Array.from({ length: 300 }, (_, index) => ({
  path: `src/module-${String(index).padStart(3, '0')}/index.ts`,
  bytes: ((index * 7919) % 50_000) + 100,
  modified: `2026-11-${String((index % 28) + 1).padStart(2, '0')}T10:00:00Z`,
}));
const labels = ['bug', 'feature', 'docs', 'question', 'performance'];
const issues = Array.from({ length: 150 }, (_, index) => ({
  number: index + 1,
  title: `Issue number ${index + 1} about the ${labels[index % 5]} area of the toolkit`,
  labels: [labels[index % 5], ...(index % 3 === 0 ? ['triage'] : [])],
  body: `Steps to reproduce: run the agent with option ${index}. Expected one thing, got another. `.repeat(
    3,
  ),
}));
const customers = Array.from({ length: 60 }, (_, index) => ({
  id: `cus_${1000 + index}`,
  name: `Customer ${index}`,
  status: index % 4 === 0 ? 'inactive' : 'active',
  balance: (index * 137) % 5_000,
  address: { street: `${index} Main Street`, city: 'Springfield', country: 'US' },
}));
const users = Array.from({ length: 20 }, (_, index) => ({
  id: `u${index}`,
  name: `User ${index}`,
}));
const orders = (userId: string) =>
  Array.from({ length: 3 }, (_, index) => ({
    id: `${userId}-o${index}`,
    items: Array.from({ length: ((index + userId.length) % 4) + 1 }, (_, item) => ({
      sku: `sku-${item}`,
      quantity: item + 1,
    })),
  }));

const json = (value: unknown) => JSON.stringify(value, null, 2);
const readOnly = { permission: 'read-only' as const };

const tools: AnyAgentTool[] = [
  defineTool({
    name: 'list_files',
    description: 'Lists every file of the workspace.',
    input: z.object({}),
    policy: readOnly,
    execute: async () => json(files.map((file) => file.path)),
  }),
  defineTool({
    name: 'file_info',
    description: 'Size (bytes) and modification time of one file.',
    input: z.object({ path: z.string() }),
    policy: readOnly,
    execute: async ({ path }) => json(files.find((file) => file.path === path)),
  }),
  defineTool({
    name: 'list_issues',
    description: 'One page (30) of the repository issues, with bodies.',
    input: z.object({ page: z.number().int().min(1) }),
    policy: readOnly,
    execute: async ({ page }) => json(issues.slice((page - 1) * 30, page * 30)),
  }),
  defineTool({
    name: 'get_customer',
    description: 'GET /customers/{id}: one customer record.',
    input: z.object({ id: z.string() }),
    policy: readOnly,
    execute: async ({ id }) => json(customers.find((customer) => customer.id === id)),
  }),
  defineTool({
    name: 'search',
    description: 'Searches the workspace; one line per match (path:line: text).',
    input: z.object({ pattern: z.string() }),
    policy: readOnly,
    execute: async ({ pattern }) =>
      files
        .slice(0, 200)
        .map((file, index) => `${file.path}:${index + 1}: const value = ${pattern}(${index});`)
        .join('\n'),
  }),
  defineTool({
    name: 'list_users',
    description: 'Lists users.',
    input: z.object({}),
    policy: readOnly,
    execute: async () => json(users),
  }),
  defineTool({
    name: 'get_orders',
    description: "A user's orders with their items.",
    input: z.object({ userId: z.string() }),
    policy: readOnly,
    execute: async ({ userId }) => json(orders(userId)),
  }),
];

/** One task: the direct decisions (turns of calls, each turn after the previous results) and the script doing the same. */
interface Task {
  name: string;
  prompt: string;
  direct: { name: string; arguments: Record<string, unknown> }[][];
  script: string;
  answer: string;
}

const tasks: Task[] = [
  {
    name: 'file triage: 3 largest of 300 files',
    prompt: 'Which three files are the largest?',
    direct: [
      [{ name: 'list_files', arguments: {} }],
      files.map((file) => ({ name: 'file_info', arguments: { path: file.path } })),
    ],
    script:
      'const paths = await tools.list_files({}); const infos = await Promise.all(paths.map((path) => tools.file_info({ path }))); return infos.sort((a, b) => b.bytes - a.bytes).slice(0, 3).map((f) => f.path + " " + f.bytes);',
    answer: 'The three largest files are listed above.',
  },
  {
    name: 'issues by label (5 pages of 30)',
    prompt: 'Count the issues by label.',
    direct: [
      Array.from({ length: 5 }, (_, index) => ({
        name: 'list_issues',
        arguments: { page: index + 1 },
      })),
    ],
    script:
      'const counts = {}; for (let page = 1; page <= 5; page++) for (const issue of await tools.list_issues({ page })) for (const label of issue.labels) counts[label] = (counts[label] ?? 0) + 1; return counts;',
    answer: 'Counts by label are above.',
  },
  {
    name: 'API records: balance of 60 customers',
    prompt: 'What is the total balance of the active customers?',
    direct: [
      customers.map((customer) => ({ name: 'get_customer', arguments: { id: customer.id } })),
    ],
    script: `const ids = ${JSON.stringify(customers.map((customer) => customer.id))}; let total = 0; for (const c of await Promise.all(ids.map((id) => tools.get_customer({ id })))) if (c.status === 'active') total += c.balance; return total;`,
    answer: 'The total balance is above.',
  },
  {
    name: 'search: matches per directory',
    prompt: 'Which directories use parseConfig most?',
    direct: [[{ name: 'search', arguments: { pattern: 'parseConfig' } }]],
    script:
      'const lines = (await tools.search({ pattern: "parseConfig" })).split("\\n"); const counts = {}; for (const line of lines) { const dir = line.split("/").slice(0, 2).join("/"); counts[dir] = (counts[dir] ?? 0) + 1 } return Object.entries(counts).sort((a, b) => b[1] - a[1]).slice(0, 5);',
    answer: 'The top directories are above.',
  },
  {
    name: 'dependent calls: items ordered by 20 users',
    prompt: 'How many items did each user order in total?',
    direct: [
      [{ name: 'list_users', arguments: {} }],
      users.map((user) => ({ name: 'get_orders', arguments: { userId: user.id } })),
    ],
    script:
      'const result = {}; for (const user of await tools.list_users({})) { let n = 0; for (const order of await tools.get_orders({ userId: user.id })) for (const item of order.items) n += item.quantity; result[user.name] = n } return result;',
    answer: 'The totals per user are above.',
  },
];

const systemPrompt = 'You are a helpful assistant. Use the tools to answer.';

/** Characters / 4 of what each request carries: the common rough token estimate. */
function tokensOf(requests: readonly ProviderRequest[]): number {
  let chars = 0;
  for (const request of requests) {
    chars += (request.systemPrompt ?? '').length;
    chars += JSON.stringify(request.tools ?? []).length;
    chars += JSON.stringify(request.messages).length;
  }
  return Math.round(chars / 4);
}

async function runTask(
  task: Task,
  mode: 'direct' | 'code',
): Promise<{ tokens: number; trips: number; answer: string }> {
  const steps: ScriptedStep[] =
    mode === 'direct'
      ? [...task.direct.map((calls) => ({ toolCalls: calls })), { text: task.answer }]
      : [
          { toolCalls: [{ name: 'run_script', arguments: { script: task.script } }] },
          { text: task.answer },
        ];
  const provider = createScriptedProvider(steps);
  const agent = new Agent({
    provider,
    model: 'bench',
    systemPrompt,
    tools: mode === 'direct' ? tools : [createCodeModeTool({ tools })],
  });
  const result = await agent.run(task.prompt).result;
  if (result.stopReason !== 'completed')
    throw new Error(`${task.name} (${mode}) ended with ${result.stopReason}`);
  const failed = result.messages.find(
    (message) => message.role === 'toolResult' && message.isError,
  );
  if (failed !== undefined)
    throw new Error(`${task.name} (${mode}): a call failed: ${JSON.stringify(failed.content)}`);
  return { tokens: tokensOf(provider.requests), trips: provider.calls, answer: task.answer };
}

async function overhead(): Promise<{
  direct: number;
  nested: number;
  warmStart: number;
}> {
  const noop = defineTool({
    name: 'noop',
    description: 'Does nothing.',
    input: z.object({ i: z.number() }),
    policy: readOnly,
    execute: async () => 'ok',
  });
  const codeTool = createCodeModeTool({ tools: [noop] });
  let started = performance.now();
  const calls = 2_000;
  // Warm-up of both paths.
  for (let index = 0; index < 200; index++) await executeTool(noop, { i: index });
  await executeTool(codeTool, { script: 'for (let i = 0; i < 200; i++) await tools.noop({ i })' });
  started = performance.now();
  for (let index = 0; index < calls; index++) await executeTool(noop, { i: index });
  const direct = (performance.now() - started) / calls;
  const empty = [];
  for (let round = 0; round < 20; round++) {
    started = performance.now();
    await executeTool(codeTool, { script: 'return 1' });
    empty.push(performance.now() - started);
  }
  empty.sort((a, b) => a - b);
  const warmStart = empty[Math.floor(empty.length / 2)] ?? 0;
  started = performance.now();
  await executeTool(codeTool, {
    script: `for (let i = 0; i < ${calls}; i++) await tools.noop({ i })`,
  });
  const nested = (performance.now() - started - warmStart) / calls;
  return { direct, nested, warmStart };
}

export async function run(): Promise<BenchSection[]> {
  // In fresh processes, before this one loads anything of code mode.
  const startUp = measureStartUp();
  const rows: string[][] = [];
  let directTotal = 0;
  let codeTotal = 0;
  for (const task of tasks) {
    const direct = await runTask(task, 'direct');
    const code = await runTask(task, 'code');
    directTotal += direct.tokens;
    codeTotal += code.tokens;
    rows.push([
      task.name,
      String(direct.tokens),
      String(code.tokens),
      `${Math.round((1 - code.tokens / direct.tokens) * 100)}%`,
      String(direct.trips),
      String(code.trips),
    ]);
  }
  rows.push([
    '**all five**',
    String(directTotal),
    String(codeTotal),
    `**${Math.round((1 - codeTotal / directTotal) * 100)}%**`,
    '',
    '',
  ]);
  const cost = await overhead();
  return [
    {
      title: 'Code mode: tokens sent to the model and round trips, direct vs one script',
      columns: [
        'task',
        'direct tokens',
        'code-mode tokens',
        'fewer',
        'direct round trips',
        'code-mode round trips',
      ],
      rows,
      notes: [
        'Same decisions both ways: direct = the calls as model turns (parallel calls in one turn where they do not depend on each other); code mode = one run_script making the same calls. Tokens ≈ characters / 4 of every request (system prompt, tool definitions, messages), summed over the run.',
        'Code mode sends the run_script definition (with the TypeScript declarations of all seven tools) instead of seven definitions; every nested call still goes through the loop (gate, hooks, events).',
      ],
    },
    {
      title: 'Code mode: nested call overhead and runtime start-up',
      columns: ['measure', 'ms'],
      rows: [
        ['one direct call (executeTool of a no-op tool)', cost.direct.toFixed(4)],
        ['one nested call from a script (same tool)', cost.nested.toFixed(4)],
        ['overhead per nested call vs direct', (cost.nested - cost.direct).toFixed(4)],
        [
          'runtime start-up per script, warm (`return 1` end to end, median of 20)',
          cost.warmStart.toFixed(2),
        ],
      ],
      notes: [
        '2,000 sequential calls each way after a warm-up; the nested figure subtracts the warm start-up of the script.',
      ],
    },
    {
      title: 'Code mode: start-up in a fresh process',
      columns: ['measure', 'ms (median)'],
      rows: [
        ['import @agent/core and @agent/code-mode', startUp.importMs.toFixed(1)],
        [
          'first script, nothing warmed up (compile QuickJS, load the TypeScript stripper, first instance)',
          startUp.coldFirstScriptMs.toFixed(1),
        ],
        [
          'warm-up started by createCodeModeTool (in the background, while the model answers)',
          startUp.warmUpMs.toFixed(1),
        ],
        ['first script after the warm-up', startUp.warmedFirstScriptMs.toFixed(1)],
        [
          'each later script (fresh QuickJS instance, runtime and context)',
          startUp.perScriptMs.toFixed(2),
        ],
      ],
      notes: [
        `${startUp.rounds} fresh \`node\` processes per probe, medians; each script end to end through executeTool (\`return 1\`). Every script gets its own WebAssembly instance: nothing but the compiled code is shared.`,
      ],
    },
  ];
}
