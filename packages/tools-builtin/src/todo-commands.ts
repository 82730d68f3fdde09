/**
 * Kiro's task-list shapes on todo_write. Kiro keeps its list through commands rather than whole
 * lists: `todo_list` (`create`, `complete`, `add`, `remove` by 0-based position, `load`, `lookup`)
 * and its newer `task`/`todo` (`create`, `complete`, `add`, `remove` by task id, `list`). A call
 * with a `command` is one of those; it is applied to todo_write's current list and the new list is
 * stored through todo_write itself (its checks, `onChange` and rendering). The model is shown only
 * todo_write's schema.
 *
 * One list is kept per tool, with an id (`list-1`, …) that each `create` renews; Kiro's
 * `current_id`/`load_id` must name it. Completing the last open task clears the list, as Kiro's
 * newer tool does. A task's `details` follow its description; each `context_update` and the
 * `modified_files` are kept with the list and shown with it (the last three updates).
 */
import {
  type AgentTool,
  type AnyAgentTool,
  type ToolContext,
  ToolError,
  type ToolResult,
  type ValidationResult,
  validateWithZod,
} from '@agent/core';
import * as z from 'zod';
import { renderTodos, type TodoItem, type TodoTool } from './todo.js';

const taskInput = z.union([
  z.string(),
  z.strictObject({ task_description: z.string(), details: z.string().optional() }),
]);
const indices = z.array(z.number().int().min(0));
const ids = z.array(z.string());

const todoCommand = z.discriminatedUnion('command', [
  z.strictObject({
    command: z.literal('create'),
    tasks: z.array(taskInput),
    todo_list_description: z.string().optional(),
    task_list_description: z.string().optional(),
  }),
  z.strictObject({
    command: z.literal('complete'),
    completed_indices: indices.optional(),
    completed_task_ids: ids.optional(),
    context_update: z.string(),
    modified_files: z.array(z.string()).optional(),
    current_id: z.string().optional(),
  }),
  z.strictObject({
    command: z.literal('add'),
    new_tasks: z.array(taskInput),
    insert_indices: indices.optional(),
    new_description: z.string().optional(),
    current_id: z.string().optional(),
  }),
  z.strictObject({
    command: z.literal('remove'),
    remove_indices: indices.optional(),
    remove_task_ids: ids.optional(),
    new_description: z.string().optional(),
    current_id: z.string().optional(),
  }),
  z.strictObject({ command: z.literal('load'), load_id: z.string() }),
  z.strictObject({ command: z.literal('lookup') }),
  z.strictObject({ command: z.literal('list') }),
]);

const commands = ['create', 'complete', 'add', 'remove', 'load', 'lookup', 'list'] as const;

/** One of Kiro's task-list commands. */
export type TodoCommand = z.infer<typeof todoCommand>;

/** Whether raw arguments are a command (a `command` field), not todo_write's whole list. */
function isCommand(args: unknown): args is { command: unknown } {
  return args !== null && typeof args === 'object' && !Array.isArray(args) && 'command' in args;
}

/** Kiro sends `null` for an absent field. */
function withoutNulls(raw: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(raw).filter(([, value]) => value !== null));
}

/** What the list holds besides its tasks. */
interface ListState {
  id: string;
  description: string;
  context: string[];
  modifiedFiles: string[];
}

function refuse(detail: string): never {
  throw ToolError.invalidArguments('todo_write', detail);
}

function content(task: z.infer<typeof taskInput>): string {
  const [description, details] =
    typeof task === 'string' ? [task, undefined] : [task.task_description, task.details];
  if (description.trim() === '') refuse('a task description is empty');
  const extra = details?.trim();
  return extra === undefined || extra === ''
    ? description.trim()
    : `${description.trim()} — ${extra}`;
}

function nonEmpty<T>(values: readonly T[] | undefined, what: string): readonly T[] {
  if (values === undefined || values.length === 0) refuse(`give at least one ${what}`);
  return values;
}

/** Positions (0-based) or ids of tasks → the tasks' ids; unknown ones are refused. */
function taskIds(
  todos: readonly TodoItem[],
  positions: readonly number[] | undefined,
  wanted: readonly string[] | undefined,
): Set<string> {
  if (positions !== undefined && positions.length > 0) {
    const out = positions.filter((position) => position >= todos.length);
    if (out.length > 0)
      refuse(
        `task position ${out.join(', ')} is out of range: the list has ${todos.length} tasks (0-based)`,
      );
    return new Set(positions.map((position) => todos[position]?.id ?? ''));
  }
  const given = nonEmpty(wanted, 'task id (or position)');
  const missing = given.filter((id) => !todos.some((todo) => todo.id === id));
  if (missing.length > 0)
    refuse(
      `task id ${missing.map((id) => `"${id}"`).join(', ')} not found; the ids are ${todos.map((todo) => `"${todo.id}"`).join(', ') || 'none (the list is empty)'}`,
    );
  return new Set(given);
}

/** Ids `1`, `2`, … not yet used in `todos`. */
function freshIds(todos: readonly TodoItem[], count: number): string[] {
  const used = new Set(todos.map((todo) => todo.id));
  const fresh: string[] = [];
  for (let next = 1; fresh.length < count; next++)
    if (!used.has(String(next))) fresh.push(String(next));
  return fresh;
}

/** The new list a command asks for, from the current one; `undefined` for the read-only ones. */
function applyCommand(
  command: TodoCommand,
  todos: readonly TodoItem[],
  state: ListState,
  newListId: () => string,
): TodoItem[] | undefined {
  const current = 'current_id' in command ? command.current_id : undefined;
  if (current !== undefined && current !== state.id)
    refuse(`current_id "${current}" is not the current list; its id is "${state.id}"`);
  const describe = (text: string | undefined) => {
    if (text === undefined) return;
    if (text.trim() === '') refuse('the new description is empty');
    state.description = text.trim();
  };
  switch (command.command) {
    case 'create': {
      const tasks = nonEmpty(command.tasks, 'task');
      const description = command.task_list_description ?? command.todo_list_description;
      if (description === undefined || description.trim() === '')
        refuse('give the list a description (task_list_description)');
      Object.assign(state, {
        id: newListId(),
        description: description.trim(),
        context: [],
        modifiedFiles: [],
      });
      return tasks.map((task, index) => ({
        id: String(index + 1),
        content: content(task),
        status: 'pending',
      }));
    }
    case 'complete': {
      const done = taskIds(todos, command.completed_indices, command.completed_task_ids);
      if (command.context_update.trim() === '')
        refuse('context_update is empty: say what was done');
      state.context.push(command.context_update.trim());
      for (const file of command.modified_files ?? [])
        if (!state.modifiedFiles.includes(file)) state.modifiedFiles.push(file);
      const next = todos.map((todo) =>
        done.has(todo.id) ? { ...todo, status: 'completed' as const } : todo,
      );
      return next.every((todo) => todo.status === 'completed') ? [] : next;
    }
    case 'add': {
      const added = nonEmpty(command.new_tasks, 'new task').map(content);
      describe(command.new_description);
      const fresh = freshIds(todos, added.length);
      const items = added.map(
        (text, index): TodoItem => ({ id: fresh[index] ?? '', content: text, status: 'pending' }),
      );
      const positions = command.insert_indices;
      if (positions === undefined) return [...todos, ...items];
      if (positions.length !== items.length) refuse('give one insert index per new task');
      if (new Set(positions).size !== positions.length) refuse('insert indices must be unique');
      const next = [...todos];
      positions.forEach((position, index) => {
        if (position > next.length)
          refuse(`insert index ${position} is past the end of the list (${next.length} tasks)`);
        const item = items[index];
        if (item !== undefined) next.splice(position, 0, item);
      });
      return next;
    }
    case 'remove': {
      const gone = taskIds(todos, command.remove_indices, command.remove_task_ids);
      describe(command.new_description);
      return todos.filter((todo) => !gone.has(todo.id));
    }
    case 'load':
      if (command.load_id !== state.id)
        refuse(
          `there is no list "${command.load_id}": one list is kept, and its id is "${state.id}"`,
        );
      return undefined;
    case 'lookup':
    case 'list':
      return undefined;
    default: {
      const exhaustive: never = command;
      return exhaustive;
    }
  }
}

/** The lines shown above the rendered list. */
function header(state: ListState): string {
  const lines = [
    `Task list ${state.id}${state.description === '' ? '' : `: ${state.description}`}`,
  ];
  if (state.context.length > 0)
    lines.push(`Recent context: ${state.context.slice(-3).join(' | ')}`);
  if (state.modifiedFiles.length > 0)
    lines.push(`Modified files: ${state.modifiedFiles.join(', ')}`);
  return lines.join('\n');
}

/**
 * todo_write that also takes Kiro's `todo_list`/`task` commands (and answers to those names); see
 * the module comment.
 */
export function withTodoCommands(todo: TodoTool): AgentTool<unknown> {
  let lists = 1;
  const state: ListState = { id: 'list-1', description: '', context: [], modifiedFiles: [] };
  // Every call, command or list, takes todo_write's one resource key (its policy ignores the args).
  const base: AnyAgentTool = todo;
  return {
    ...base,
    aliases: [...(todo.aliases ?? []), 'todo_list', 'todo', 'task'],
    prepareArguments: (raw) =>
      isCommand(raw)
        ? withoutNulls(raw as Record<string, unknown>)
        : (todo.prepareArguments?.(raw) ?? raw),
    validate: (args): ValidationResult<unknown> => {
      if (!isCommand(args)) return todo.validate?.(args) ?? { ok: true, value: args };
      // zod reports an unknown discriminator as "matches none of the shapes": name the commands.
      if (!(commands as readonly unknown[]).includes(args.command))
        return {
          ok: false,
          issues: [
            {
              path: ['command'],
              message: `expected one of ${commands.map((name) => `"${name}"`).join(', ')}, received ${JSON.stringify(args.command)}`,
            },
          ],
        };
      return validateWithZod(todoCommand, args);
    },
    execute: async (args, ctx: ToolContext): Promise<ToolResult> => {
      if (!isCommand(args)) return todo.execute(args as Parameters<TodoTool['execute']>[0], ctx);
      const before = {
        ...state,
        context: [...state.context],
        modifiedFiles: [...state.modifiedFiles],
      };
      let next: TodoItem[] | undefined;
      try {
        next = applyCommand(args as TodoCommand, todo.getTodos(), state, () => `list-${++lists}`);
      } catch (error) {
        // A refused command leaves the list's description and context as they were.
        Object.assign(state, before);
        throw error;
      }
      const result = next === undefined ? undefined : await todo.execute({ todos: next }, ctx);
      const listed = result?.content[0]?.type === 'text' ? result.content[0].text : undefined;
      const cleared =
        next !== undefined && next.length === 0 && (args as TodoCommand).command === 'complete';
      const body = cleared
        ? 'All tasks are completed; the list is cleared.'
        : (listed ?? renderTodos(todo.getTodos()));
      return {
        content: [{ type: 'text', text: `${header(state)}\n${body}` }],
        details: { ...(result?.details ?? { todos: todo.getTodos() }), list: { ...state } },
      };
    },
  };
}
