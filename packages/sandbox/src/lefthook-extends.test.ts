import { describe, expect, it } from 'vitest';
import { lefthookExtendsEntries } from './lefthook-extends.js';

// lefthook's `extends:` in each format its configuration may be written in: every entry is found
// (the files are then kept read-only in the sandbox, as the configuration is).
describe('lefthookExtendsEntries', () => {
  it.each([
    [
      'a YAML block list',
      'pre-commit:\n  jobs: []\nextends:\n  - ci/base.yml # shared\n  - "./more.yaml"\nother: 1\n',
    ],
    ['a YAML flow list', "extends: [ci/base.yml, './more.yaml']\n"],
    ['a TOML array over lines', 'extends = [\n  "ci/base.yml",\n  "./more.yaml",\n]\n'],
    ['JSON', '{\n  "extends": ["ci/base.yml", "./more.yaml"],\n  "pre-commit": {}\n}\n'],
  ])('%s', (_label, text) => {
    expect(lefthookExtendsEntries(text)).toEqual(['ci/base.yml', './more.yaml']);
  });

  it('a YAML scalar, and a configuration without extends', () => {
    expect(lefthookExtendsEntries('extends: ci/base.yml\n')).toEqual(['ci/base.yml']);
    expect(lefthookExtendsEntries('pre-commit:\n  jobs:\n    - run: make lint\n')).toEqual([]);
  });
});
