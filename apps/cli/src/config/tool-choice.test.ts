import { defaultToolNames } from '@agent/tools-builtin';
import { describe, expect, it } from 'vitest';
import { chooseTools, parseToolList, ToolListError } from './tool-choice.js';

const lists = (...texts: string[]) => texts.map((text) => parseToolList(text, '--tools'));

describe('chooseTools', () => {
  it('no list is the default set, without introspect or code', () => {
    expect(chooseTools([])).toEqual({
      builtin: [...defaultToolNames],
      introspect: false,
      code: false,
    });
  });

  it.each([
    ['default', [...defaultToolNames], false, false],
    ['-bash', defaultToolNames.filter((name) => name !== 'bash'), false, false],
    ['read_file,glob', ['read_file', 'glob'], false, false],
    ['kiro', ['think', 'report_issue', 'use_aws', 'knowledge'], true, true],
    [
      'default,kiro,-code',
      [...defaultToolNames, 'think', 'report_issue', 'use_aws', 'knowledge'],
      true,
      false,
    ],
    ['default,kiro,-kiro', [...defaultToolNames], false, false],
    ['-default,introspect', [], true, false],
    ['default,text_editor', [...defaultToolNames, 'text_editor'], false, false],
    ['-bash,bash', [...defaultToolNames], false, false],
  ])('%s', (text, builtin, introspect, code) => {
    expect(chooseTools(lists(text))).toEqual({ builtin, introspect, code });
  });

  it('a list starting with a removal changes the set before it; any other replaces it', () => {
    expect(chooseTools(lists('default,kiro', '-use_aws')).builtin).toContain('think');
    expect(chooseTools(lists('default,kiro', '-use_aws')).builtin).not.toContain('use_aws');
    expect(chooseTools(lists('default,kiro', 'read_file'))).toEqual({
      builtin: ['read_file'],
      introspect: false,
      code: false,
    });
  });

  it.each(['', 'default,', 'nope', '-nope', '--bash', 'BASH', 'thinking', ' '])(
    'refuses %j naming the valid names',
    (text) => {
      expect(() => parseToolList(text, '--tools')).toThrow(ToolListError);
      expect(() => parseToolList(text, '--tools')).toThrow(
        /valid: default, kiro, bash, .*introspect, code/,
      );
    },
  );
});
