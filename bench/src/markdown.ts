import type { BenchSection } from './types.js';

/** Escapes a cell so it cannot break the table (pipes, newlines). */
function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\r?\n/g, ' ');
}

/** Renders a section as a markdown heading, a column-aligned table and its notes. */
export function renderSection(section: BenchSection): string {
  const width = section.columns.length;
  const rows = section.rows.map((row) =>
    Array.from({ length: width }, (_, index) => cell(row[index] ?? '')),
  );
  const header = section.columns.map(cell);
  const widths = header.map((title, index) =>
    Math.max(3, title.length, ...rows.map((row) => (row[index] ?? '').length)),
  );
  const line = (cells: readonly string[]) =>
    `| ${cells.map((text, index) => text.padEnd(widths[index] ?? 3)).join(' | ')} |`;
  const out = [`## ${section.title}`, '', line(header)];
  out.push(`| ${widths.map((w) => '-'.repeat(w)).join(' | ')} |`);
  for (const row of rows) out.push(line(row));
  if (section.notes !== undefined && section.notes.length > 0) {
    out.push('');
    for (const note of section.notes) out.push(`- ${note}`);
  }
  return out.join('\n');
}
