import { ToolError } from '@agent/core';
import { describe, expect, it } from 'vitest';
import { resultText, testContext } from './test-helpers.js';
import { createTodoTool, renderTodos, type TodoItem } from './todo.js';

const list: TodoItem[] = [
  { id: '1', content: 'Write the parser', status: 'completed' },
  { id: '2', content: 'Test it', status: 'in_progress' },
  { id: '3', content: 'Document it', status: 'pending' },
];

describe('todo_write', () => {
  it('replaces the list, renders it compactly and tells onChange', async () => {
    const seen: (readonly TodoItem[])[] = [];
    const tool = createTodoTool({ onChange: (todos) => seen.push(todos) });
    expect(tool.getTodos()).toEqual([]);
    const result = await tool.execute({ todos: list }, testContext());
    expect(resultText(result)).toBe(
      [
        'Tasks: 1/3 completed',
        '[x] Write the parser (id 1)',
        '[~] Test it (id 2) ← in progress',
        '[ ] Document it (id 3)',
      ].join('\n'),
    );
    expect(tool.getTodos()).toEqual(list);
    expect(seen).toEqual([list]);
    const cleared = await tool.execute({ todos: [] }, testContext());
    expect(resultText(cleared)).toBe('The task list is empty.');
    expect(cleared.details?.previous).toEqual(list);
    expect(tool.getTodos()).toEqual([]);
  });

  it('refuses two tasks in progress or a repeated id, keeping the old list', async () => {
    const tool = createTodoTool({ initial: list });
    const twoActive = await tool
      .execute(
        {
          todos: [
            { id: 'a', content: 'One', status: 'in_progress' },
            { id: 'b', content: 'Two', status: 'in_progress' },
          ],
        },
        testContext(),
      )
      .catch((error: unknown) => error);
    expect(ToolError.isInstance(twoActive) && twoActive.kind).toBe('invalid-args');
    expect(String(twoActive)).toContain('2 tasks are in_progress ("a", "b"); at most one may be');
    const repeated = await tool
      .execute(
        {
          todos: [
            { id: 'a', content: 'One', status: 'pending' },
            { id: 'a', content: 'Two', status: 'pending' },
          ],
        },
        testContext(),
      )
      .catch((error: unknown) => error);
    expect(ToolError.isInstance(repeated) && repeated.kind).toBe('invalid-args');
    expect(tool.getTodos()).toEqual(list);
    expect(tool.validate?.({ todos: [{ id: '1', content: 'x', status: 'done' }] }).ok).toBe(false);
  });

  it('keeps state per instance, hands out copies and serialises calls by instance', async () => {
    const first = createTodoTool();
    const second = createTodoTool();
    await first.execute({ todos: list }, testContext());
    expect(second.getTodos()).toEqual([]);
    const copy = first.getTodos();
    copy.pop();
    expect(first.getTodos()).toHaveLength(3);
    const keyOf = (tool: typeof first) => tool.policy?.resourceKey?.({ todos: [] });
    expect(keyOf(first)).toBeDefined();
    expect(keyOf(first)).not.toBe(keyOf(second));
    expect(first.policy?.permission).toBe('read-only');
  });

  it('renders an empty list', () => {
    expect(renderTodos([])).toBe('The task list is empty.');
  });
});
