import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { applyTextEdits, unifiedDiff } from './workspace-edit.js';

describe('applyTextEdits', () => {
  it('applies several edits against the original text, CRLF lines included', () => {
    const text = 'let a = 1;\r\nlet b = a + a;\n';
    const range = (line: number, start: number, end: number) => ({
      start: { line, character: start },
      end: { line, character: end },
    });
    expect(
      applyTextEdits(text, [
        { range: range(1, 12, 13), newText: 'first' },
        { range: range(0, 4, 5), newText: 'first' },
        { range: range(1, 8, 9), newText: 'first' },
      ]),
    ).toBe('let first = 1;\r\nlet b = first + first;\n');
    // A position past the end of a line stops before its line break.
    expect(applyTextEdits(text, [{ range: range(0, 10, 99), newText: ' // one' }])).toBe(
      'let a = 1; // one\r\nlet b = a + a;\n',
    );
  });

  it('equals splicing non-overlapping replacements into single-line text (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 40 }).filter((value) => !/[\r\n]/.test(value)),
        fc.array(fc.tuple(fc.nat(), fc.nat(), fc.string({ maxLength: 5 })), { maxLength: 5 }),
        (text, raw) => {
          // Make the spans non-overlapping and sorted.
          const cuts = raw
            .map(([a, b, newText]) => {
              const start = Math.min(a, b) % (text.length + 1);
              const end = Math.min(Math.max(a, b) % (text.length + 1), text.length);
              return { start, end: Math.max(start, end), newText };
            })
            .sort((x, y) => x.start - y.start);
          const spans: typeof cuts = [];
          for (const cut of cuts) {
            const last = spans.at(-1);
            if (last === undefined || cut.start >= last.end) spans.push(cut);
          }
          let expected = '';
          let at = 0;
          for (const span of spans) {
            expected += text.slice(at, span.start) + span.newText;
            at = span.end;
          }
          expected += text.slice(at);
          const edits = spans.map((span) => ({
            range: {
              start: { line: 0, character: span.start },
              end: { line: 0, character: span.end },
            },
            newText: span.newText,
          }));
          expect(applyTextEdits(text, edits)).toBe(expected);
        },
      ),
    );
  });
});

describe('unifiedDiff', () => {
  it('writes a/ and b/ headers with workspace-relative paths and no "=" banner', async () => {
    const diff = await unifiedDiff(
      [{ path: '/w/src/x.ts', before: 'a\nb\n', after: 'a\nc\n' }],
      (file) => file.slice('/w/'.length),
    );
    expect(diff).toBe('--- a/src/x.ts\n+++ b/src/x.ts\n@@ -1,2 +1,2 @@\n a\n-b\n+c\n');
  });
});
