import { type DefinedTool, defineTool, ToolError, type ToolResult } from '@agent/core';
import * as z from 'zod';

/** Where a task stands. */
export type TodoStatus = 'pending' | 'in_progress' | 'completed';

/** One entry of the task list. */
export interface TodoItem {
  /** Stable id chosen by the model, unique in the list. */
  id: string;
  /** What to do, in the imperative. */
  content: string;
  status: TodoStatus;
  /** The task in the present continuous ("Running tests"), shown while it is in progress. */
  activeForm?: string | undefined;
}

/** Arguments of the todo_write tool: the whole new list. */
export interface TodoWriteArgs {
  todos: TodoItem[];
}

/** `details` of a todo_write result. */
export interface TodoWriteDetails {
  /** The list after this call. */
  todos: TodoItem[];
  /** The list before it. */
  previous: TodoItem[];
}

/** Options of {@link createTodoTool}. */
export interface TodoToolOptions {
  /** The list the tool starts with [empty]. */
  initial?: readonly TodoItem[];
  /** Called with the new list after each successful call (for UIs); errors it throws are ignored. */
  onChange?: (todos: readonly TodoItem[]) => void;
}

/** The todo_write tool and a way to read its list. */
export interface TodoTool extends DefinedTool<TodoWriteArgs, TodoWriteDetails> {
  /** The current list (a copy). */
  getTodos(): TodoItem[];
}

const statusMarks: Record<TodoStatus, string> = {
  pending: '[ ]',
  in_progress: '[~]',
  completed: '[x]',
};

/** A compact rendering of a task list: a count line, then one `[x] content` line per task. */
export function renderTodos(todos: readonly TodoItem[]): string {
  if (todos.length === 0) return 'The task list is empty.';
  const done = todos.filter((todo) => todo.status === 'completed').length;
  const lines = todos.map(
    (todo) =>
      `${statusMarks[todo.status]} ${todo.content} (id ${todo.id})${todo.status === 'in_progress' ? ` ← in progress${todo.activeForm === undefined ? '' : `: ${todo.activeForm}`}` : ''}`,
  );
  return [`Tasks: ${done}/${todos.length} completed`, ...lines].join('\n');
}

/** Why a list is invalid (duplicate ids, several tasks in progress), or `undefined`. */
function todoListProblem(todos: readonly TodoItem[]): string | undefined {
  const seen = new Set<string>();
  for (const todo of todos) {
    if (seen.has(todo.id))
      return `the id "${todo.id}" is used by more than one task; ids must be unique.`;
    seen.add(todo.id);
  }
  const active = todos.filter((todo) => todo.status === 'in_progress');
  if (active.length > 1)
    return `${active.length} tasks are in_progress (${active.map((todo) => `"${todo.id}"`).join(', ')}); at most one may be. Mark the others pending or completed.`;
  return undefined;
}

/**
 * claw-code's and Claude Code's `TodoWrite` items have no `id`: each task without one gets its
 * 1-based position (or the next number no other task uses), so their lists validate as ours.
 */
function todoSeedArguments(raw: unknown): unknown {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) return raw;
  const todos = (raw as { todos?: unknown }).todos;
  if (!Array.isArray(todos)) return raw;
  const isItem = (todo: unknown): todo is Record<string, unknown> =>
    todo !== null && typeof todo === 'object' && !Array.isArray(todo);
  if (todos.every((todo) => !isItem(todo) || 'id' in todo)) return raw;
  const taken = new Set(todos.filter(isItem).map((todo) => String(todo.id)));
  let next = 0;
  const freshId = (position: number): string => {
    if (!taken.has(String(position))) return String(position);
    next = Math.max(next, position);
    while (taken.has(String(++next)));
    return String(next);
  };
  const withIds = todos.map((todo, index) => {
    if (!isItem(todo) || 'id' in todo) return todo;
    const id = freshId(index + 1);
    taken.add(id);
    return { id, ...todo };
  });
  return { ...(raw as Record<string, unknown>), todos: withIds };
}

let instances = 0;

/**
 * The `todo_write` tool: the model keeps a structured task list, replacing the whole list on each
 * call; the result renders the new list. State lives in this tool instance (`getTodos()`,
 * `onChange`); calls are serialised by a per-instance `resourceKey`. At most one task may be
 * `in_progress` and ids must be unique (else an `invalid-args` error, the list unchanged).
 */
export function createTodoTool(options: TodoToolOptions = {}): TodoTool {
  const copy = (todos: readonly TodoItem[]) => todos.map((todo) => ({ ...todo }));
  let todos = copy(options.initial ?? []);
  const resourceKey = `todo_write#${++instances}`;
  const tool = defineTool({
    name: 'todo_write',
    label: 'Task list',
    description: [
      'Keeps your task list for the current work. Send the whole list each time; it replaces the previous one.',
      'Each task has a unique "id", a short imperative "content" and a "status": pending, in_progress or completed.',
      'Keep exactly one task in_progress while working, mark tasks completed as soon as they are done, and add tasks as you discover them.',
      'Use it for work of three or more steps; the result shows the list.',
    ].join(' '),
    // claw-code's and Claude Code's `TodoWrite {todos: [{content, status, activeForm}]}`.
    aliases: ['TodoWrite'],
    prepareArguments: todoSeedArguments,
    input: z.object({
      todos: z
        .array(
          z.object({
            id: z.string().min(1).describe('Unique id of the task, e.g. "1" or "write-tests".'),
            content: z.string().trim().min(1).describe('What to do.'),
            status: z.enum(['pending', 'in_progress', 'completed']),
            activeForm: z
              .string()
              .min(1)
              .optional()
              .describe('The task as "doing" (e.g. "Running tests"), shown while in progress.'),
          }),
        )
        .describe('The complete new task list.'),
    }),
    source: 'builtin',
    policy: { permission: 'read-only', resourceKey: () => resourceKey },
    execute: async (args): Promise<ToolResult<TodoWriteDetails>> => {
      const problem = todoListProblem(args.todos);
      if (problem !== undefined)
        throw new ToolError(`Invalid arguments: ${problem}`, {
          kind: 'invalid-args',
          toolName: 'todo_write',
        });
      const previous = todos;
      todos = copy(args.todos);
      try {
        options.onChange?.(copy(todos));
      } catch {
        // A failing UI callback must not lose the model's list, which is already saved.
      }
      return {
        content: [{ type: 'text', text: renderTodos(todos) }],
        details: { todos: copy(todos), previous },
      };
    },
  });
  return Object.assign(tool, { getTodos: () => copy(todos) });
}
