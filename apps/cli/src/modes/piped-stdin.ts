// What is piped into `agent -p` (`cat build.log | agent -p "why did this fail?"`): read whole,
// as part of the prompt, up to a size a model can read. Before the cap, `yes | agent -p x`, a
// `< /dev/zero` or an endless producer grew the CLI's memory until it died (std::bad_alloc, or the
// machine's OOM killer), and a few hundred MB were sent whole only for every provider to refuse them.
import { Transform } from 'node:stream';
import { UsageError } from '../config/args.js';
import { writeNotice } from '../ui/output.js';

/** Seconds of silence on stdin before the user is told what the CLI waits for. */
const stdinQuietSeconds = 3;

/** The most piped input a prompt takes: more than any model reads at once (~1–2M tokens). */
export const stdinLimitBytes = 16 * 1024 * 1024;

/**
 * Reads all of stdin (when it is a pipe or a file). A pipe that stays open and silent (a CI step,
 * `docker run -i`, a shell wrapper) would look like a hang: after a few quiet seconds one line
 * says what the CLI waits for and how to go without it. Nothing is dropped: it keeps waiting.
 * Past {@link stdinLimitBytes} it stops reading (the writer gets EPIPE) and refuses, saying what
 * to send instead.
 */
export async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  const quiet = setTimeout(() => {
    writeNotice(
      `agent: waiting for stdin to end (what is piped in is part of the prompt); if nothing is meant to come, run it with < /dev/null`,
    );
  }, stdinQuietSeconds * 1000);
  quiet.unref();
  try {
    for await (const chunk of process.stdin) {
      clearTimeout(quiet);
      size += (chunk as Buffer).length;
      if (size > stdinLimitBytes) {
        throw new UsageError(
          `stdin holds more than ${stdinLimitBytes / 1024 / 1024} MiB, more than a model reads in one prompt (it was not sent): pipe in the part that matters (tail -n 500 build.log | agent -p "…"), or name the file in the prompt and let the agent read it`,
        );
      }
      chunks.push(chunk as Buffer);
    }
  } finally {
    clearTimeout(quiet);
  }
  const bytes = Buffer.concat(chunks);
  const text = bytes.toString('utf8');
  const unreadable = notUtf8Notice(bytes, text);
  if (unreadable !== undefined) writeNotice(unreadable);
  return text;
}

/**
 * A notice when piped bytes are not UTF-8 (a Latin-1 or Windows-1252 log, UTF-16 from PowerShell,
 * a binary file): such bytes reach the model as `�`, which it cannot read back, and before the
 * notice nothing said so — the answer was about a text the user never saw.
 */
export function notUtf8Notice(bytes: Buffer, text: string): string | undefined {
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return undefined;
  } catch {
    const replaced = text.length - text.replaceAll('\uFFFD', '').length;
    const utf16 =
      bytes.length >= 2 &&
      ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff));
    const convert = utf16
      ? 'iconv -f UTF-16 -t UTF-8 file | agent -p …'
      : 'iconv -f WINDOWS-1252 -t UTF-8 file | agent -p …';
    return `agent: stdin is not UTF-8 text${utf16 ? ' (it is UTF-16)' : ''}: ${replaced} character(s) could not be read and reach the model as �. Convert it first (${convert})`;
  }
}

/**
 * `input` passed on while no line (bytes since the last `\n`) grows past `limit`: readline keeps
 * a line whole until its end, so `cat /dev/zero | agent --input-format stream-json` grew the
 * CLI's memory until it died. At the first longer line the complete lines before it go on, the
 * rest is not read (the writer gets EPIPE), and `overflowed()` says so; `completeLines()` counts the
 * lines passed whole (readline still gives the start of the long one as a last line: not one).
 */
export function boundedLines(
  input: NodeJS.ReadableStream,
  limit: number = stdinLimitBytes,
): { lines: Transform; overflowed(): boolean; completeLines(): number } {
  let sinceNewline = 0;
  let overflowed = false;
  let complete = 0;
  const count = (bytes: Buffer) => {
    for (let at = bytes.indexOf(0x0a); at !== -1; at = bytes.indexOf(0x0a, at + 1)) complete += 1;
  };
  const lines = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      if (overflowed) return done();
      const first = chunk.indexOf(0x0a);
      const last = chunk.lastIndexOf(0x0a);
      // The line the chunk continues, then (lines inside one chunk being shorter) the one it starts.
      const continued = sinceNewline + (first === -1 ? chunk.length : first);
      const tail = last === -1 ? continued : chunk.length - last - 1;
      if (continued > limit || tail > limit) {
        overflowed = true;
        if (continued <= limit) {
          count(chunk.subarray(0, last + 1));
          this.push(chunk.subarray(0, last + 1));
        }
        input.unpipe(lines);
        this.push(null);
        return done();
      }
      sinceNewline = tail;
      count(chunk);
      done(null, chunk);
    },
  });
  input.pipe(lines);
  return { lines, overflowed: () => overflowed, completeLines: () => complete };
}
