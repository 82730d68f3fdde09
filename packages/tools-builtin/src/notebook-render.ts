/**
 * What read_file shows for a Jupyter notebook: each cell's source, then its outputs — within one
 * budget for the whole notebook. A notebook is data someone else may have written: its outputs
 * can hold megabytes of text, hundreds of images, "images" whose bytes are not an image (a
 * provider refuses the whole request over one, and every later request carries it), or values
 * of the wrong shape.
 */
import { detectFileKind, type ToolResultContent } from '@agent/core';

/** Limits of {@link renderNotebook}. */
export interface NotebookRenderLimits {
  /** Characters of text for the whole notebook [100,000]. */
  maxChars?: number;
  /** Largest image shown, in decoded bytes [5 MiB]. */
  maxImageBytes?: number;
  /** Images shown at most; later ones are named, not shown [10]. */
  maxImages?: number;
  /** Decoded bytes of all images shown together [10 MiB]. */
  maxTotalImageBytes?: number;
}

/** The parts of a notebook {@link renderNotebook} reads (values as parsed: any shape). */
export interface RenderedNotebook {
  nbformat: number;
  nbformat_minor: number;
  cells: readonly unknown[];
}

const imageTypes = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp']);

function record(value: unknown): Record<string, unknown> | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : undefined;
}

/** nbformat's multiline string: a string, or a list of strings; anything else is not text. */
function multiline(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (Array.isArray(value) && value.every((line) => typeof line === 'string'))
    return value.join('');
  return undefined;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? '' : 's'}`;
}

/** The image of an output's `data`, checked: base64 that decodes to the bytes of an image. */
function imageOf(
  data: Record<string, unknown>,
): { declared: string; bytes?: Buffer; mimeType?: string; problem?: string } | undefined {
  const declared = Object.keys(data).find(
    (type) => type.startsWith('image/') && type !== 'image/svg+xml',
  );
  if (declared === undefined) return undefined;
  const text = multiline(data[declared]);
  if (text === undefined) return { declared, problem: 'its data is not a string' };
  const compact = text.replace(/\s/g, '');
  if (compact.length % 4 !== 0 || !/^[A-Za-z0-9+/]*={0,2}$/.test(compact))
    return { declared, problem: 'its data is not base64' };
  const bytes = Buffer.from(compact, 'base64');
  const kind = detectFileKind(bytes.subarray(0, 8192));
  if (kind.type !== 'image' || kind.mimeType === undefined || !imageTypes.has(kind.mimeType))
    return { declared, problem: 'its bytes are not a PNG, JPEG, GIF or WebP image' };
  return { declared, bytes, mimeType: kind.mimeType };
}

/**
 * What read_file shows for a notebook: each cell's source, then its outputs (stream text, errors,
 * `text/plain` results, images as images). All text together is cut at `maxChars`; at most
 * `maxImages` images are shown, each a real PNG/JPEG/GIF/WebP within `maxImageBytes` (its type
 * taken from its bytes); other images, and outputs or cells of the wrong shape, are named in a
 * line instead. A number for `limits` is `maxChars`.
 */
export function renderNotebook(
  notebook: RenderedNotebook,
  shown: string,
  limits: number | NotebookRenderLimits = {},
): ToolResultContent[] {
  const {
    maxChars = 100_000,
    maxImageBytes = 5 * 1024 * 1024,
    maxImages = 10,
    maxTotalImageBytes = 10 * 1024 * 1024,
  } = typeof limits === 'number' ? { maxChars: limits } : limits;
  const content: ToolResultContent[] = [];
  let text = `${shown}: Jupyter notebook (nbformat ${notebook.nbformat}.${notebook.nbformat_minor}), ${plural(notebook.cells.length, 'cell')}\n`;
  let textChars = 0;
  let cut = false;
  let images = 0;
  let imageBytes = 0;
  const add = (more: string) => {
    if (cut) return;
    const room = maxChars - textChars - text.length;
    if (more.length <= room) {
      text += more;
      return;
    }
    text += more.slice(0, Math.max(0, room));
    cut = true;
  };
  const flush = () => {
    if (text !== '') content.push({ type: 'text', text });
    textChars += text.length;
    text = '';
  };
  let index = 0;
  for (; index < notebook.cells.length && !cut; index++) {
    const cell = record(notebook.cells[index]);
    const type = typeof cell?.cell_type === 'string' ? cell.cell_type : '?';
    const id = typeof cell?.id === 'string' ? ` (id ${cell.id})` : '';
    const count =
      type === 'code' && typeof cell?.execution_count === 'number'
        ? ` [${cell.execution_count}]`
        : '';
    const source = multiline(cell?.source);
    add(`\n--- cell ${index}${id}: ${type}${count} ---\n${source ?? '[its source is not text]'}\n`);
    const outputs = cell?.outputs;
    if (outputs === undefined) continue;
    if (!Array.isArray(outputs)) {
      add('[its outputs are not a list]\n');
      continue;
    }
    for (const [number, value] of outputs.entries()) {
      const output = record(value);
      if (output === undefined || typeof output.output_type !== 'string') {
        add(`[output ${number}: not an nbformat output]\n`);
        continue;
      }
      if (output.output_type === 'stream') {
        const name = typeof output.name === 'string' ? output.name : 'stdout';
        add(`[${name}]\n${multiline(output.text) ?? '[not text]'}\n`);
      } else if (output.output_type === 'error') {
        const field = (key: string) => (typeof output[key] === 'string' ? output[key] : '');
        add(`[error] ${field('ename')}: ${field('evalue')}\n`);
      } else {
        const data = record(output.data);
        if (data === undefined) continue;
        const image = imageOf(data);
        if (image !== undefined) {
          let problem = image.problem;
          const size = image.bytes?.length ?? 0;
          if (problem === undefined && size > maxImageBytes)
            problem = `it is ${size} bytes, over the ${maxImageBytes}-byte limit for images`;
          else if (
            problem === undefined &&
            (images >= maxImages || imageBytes + size > maxTotalImageBytes)
          )
            problem = `this read shows at most ${plural(maxImages, 'image')} (${maxTotalImageBytes} bytes)`;
          if (problem !== undefined || image.bytes === undefined || image.mimeType === undefined) {
            add(`[output: ${image.declared.slice(0, 60)}; not shown: ${problem}]\n`);
            continue;
          }
          add(`[output: ${image.mimeType}]\n`);
          if (cut) break;
          flush();
          images++;
          imageBytes += size;
          content.push({
            type: 'image',
            data: image.bytes.toString('base64'),
            mimeType: image.mimeType,
          });
        } else {
          const plain = multiline(data['text/plain']);
          if (plain !== undefined) add(`[output]\n${plain}\n`);
        }
      }
    }
  }
  if (cut)
    text += `\n… (cut at ${maxChars} characters${index < notebook.cells.length ? `; cells ${index} to ${notebook.cells.length - 1} not shown` : ''}: read the file with offset and limit for its JSON)`;
  flush();
  return content;
}
