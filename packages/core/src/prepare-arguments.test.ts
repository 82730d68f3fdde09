import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composePrepareArguments, renameArguments } from './prepare-arguments.js';

describe('renameArguments', () => {
  const prepare = renameArguments(
    { file_path: 'path', filePath: 'path', prompt_text: 'prompt' },
    { drop: ['status'] },
  );

  it('renames theirs to ours, first synonym first, and drops what has no counterpart', () => {
    expect(prepare({ file_path: 'a', status: 'normal' })).toEqual({ path: 'a' });
    expect(prepare({ filePath: 'b', file_path: 'a' })).toEqual({ path: 'a', filePath: 'b' });
  });

  it('never changes a call that uses our names', () => {
    expect(prepare({ path: 'ours', file_path: 'theirs' })).toEqual({
      path: 'ours',
      file_path: 'theirs',
    });
  });

  it("reads only the call's own fields, never what every object inherits", () => {
    const inherited = renameArguments(
      { toString: 'text', valueOf: 'value' },
      { drop: ['constructor'] },
    );
    const call = { other: 1 };
    expect(inherited(call)).toBe(call);
    expect(inherited({ toString: 'a' })).toEqual({ text: 'a' });
  });

  it.each([null, 'text', 42, [1, 2], undefined])('passes %j through untouched', (raw) => {
    expect(prepare(raw)).toBe(raw);
  });

  it('returns the same object when nothing applies, and never mutates its input', () => {
    fc.assert(
      fc.property(fc.dictionary(fc.string(), fc.jsonValue()), (record) => {
        const before = JSON.stringify(record);
        const out = prepare(record) as Record<string, unknown>;
        expect(JSON.stringify(record)).toBe(before);
        const applies = ['file_path', 'filePath', 'prompt_text', 'status'].some((key) =>
          Object.hasOwn(record, key),
        );
        if (!applies) expect(out).toBe(record);
        expect(Object.hasOwn(out, 'status')).toBe(false);
        if (Object.hasOwn(record, 'path')) expect(out.path).toEqual(record.path);
      }),
    );
  });
});

describe('composePrepareArguments', () => {
  it('runs the steps in order', () => {
    const prepare = composePrepareArguments(
      renameArguments({ a: 'b' }),
      renameArguments({ b: 'c' }),
    );
    expect(prepare({ a: 1 })).toEqual({ c: 1 });
  });
});
