import { describe, expect, it } from 'vitest';
import type { AnyAgentTool } from './tool.js';
import { ToolSearchIndex } from './tool-search-index.js';
import { maxSearchPatternLength } from './tool-search-regex.js';

// Regex mode runs the model's pattern on a linear-time engine. On JavaScript's backtracking one
// each of these patterns runs for minutes to hours over this catalogue, on the thread that would
// have to notice an abort: a test that hangs here is the bug back.

const tool = (name: string, description: string): AnyAgentTool => ({
  name,
  label: name,
  description,
  parameters: { type: 'object', properties: {} },
  execute: async () => ({ content: [{ type: 'text', text: 'ok' }] }),
});

const catalogue = [
  ...Array.from({ length: 200 }, (_, at) =>
    tool(
      `issues_op_${at}`,
      `Creates a comment on an issue. ${'Lists the comments of a pull request in a repository. '.repeat(40)}`,
    ),
  ),
  tool('runs_aaaa', `${'a'.repeat(5000)}!`),
  tool('Café_Über', 'Ordnet die Bestellung zu.'),
];
const index = new ToolSearchIndex(catalogue);

describe('tool search regex mode', () => {
  it.each([
    ['(.*a){12}z'],
    ['(a|a)*#'],
    ['(a+)+#$'],
    ['^(\\w+\\s?)*$x'],
    ['(.*.*)*=+z'],
    ['(x+x+)+y'],
    ['.*a.*a.*a.*a.*a.*a.*a.*a.*#'],
  ])('%s ends (no match, no hang)', async (pattern) => {
    expect(await index.searchRegex(pattern, 5)).toEqual([]);
  });

  it('matches names first, then descriptions, case-insensitively (Unicode too)', async () => {
    const names = async (pattern: string) =>
      (await index.searchRegex(pattern, 3)).map((match) => match.name);
    expect(await names('^ISSUES_OP_1[0-9]$')).toEqual([
      'issues_op_10',
      'issues_op_11',
      'issues_op_12',
    ]);
    expect(await names('pull request.*repository')).toEqual([
      'issues_op_0',
      'issues_op_1',
      'issues_op_2',
    ]);
    expect(await names('^café_über$')).toEqual(['Café_Über']);
    expect(await names('bestellung')).toEqual(['Café_Über']);
    expect(await names('a{1000}!')).toEqual(['runs_aaaa']);
  });

  it.each([
    ['(', /missing closing \)/],
    ['issue(?=s)', /RE2 syntax: no lookaround or back-references/],
    ['(a)\\1', /RE2 syntax: no lookaround or back-references/],
    ['x'.repeat(maxSearchPatternLength + 1), /at most 1000/],
  ])('refuses %j, saying why', async (pattern, reason) => {
    await expect(index.searchRegex(pattern, 5)).rejects.toThrow(reason);
  });
});
