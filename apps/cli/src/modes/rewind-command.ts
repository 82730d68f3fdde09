import { relative } from 'node:path';
import { errorMessage, type Message, messageText } from '@agent/core';
import { planModeNote } from '../session/plan-mode.js';
import type { Session } from '../session/session.js';

/** What `/rewind <n> [what]` puts back. */
export type RewindTarget = 'both' | 'code' | 'conversation';

/** An earlier prompt the session can go back to. */
export interface RewindPoint {
  /** Index of its user message in the conversation. */
  index: number;
  text: string;
  timestamp: number;
  /** Files the file tools changed at or after it (real paths). */
  files: string[];
}

/** The user messages of the conversation, oldest first, with the files changed since each. */
export function rewindPoints(session: Session): RewindPoint[] {
  const points: RewindPoint[] = [];
  session.agent.messages.forEach((message: Message, index) => {
    if (message.role !== 'user') return;
    // A prompt sent in plan mode is listed without the note it was sent with.
    const text = messageText(message).replace(planModeNote, '').trim();
    // An empty message (an image alone) is no prompt to list.
    if (text === '') return;
    points.push({
      index,
      text,
      timestamp: message.timestamp,
      files: session.checkpoints.filesChangedSince(index),
    });
  });
  return points;
}

const usage = 'usage: /rewind [<n> [both|code|conversation] [force]]';
const untracked =
  'Files changed by bash (or by anything but the file tools) are not tracked and are not put back.';

/**
 * `/rewind` lists the earlier prompts; `/rewind <n> [both|code|conversation] [force]` goes back to
 * just before prompt n: `code` puts the files the file tools changed since back as they were, and
 * `conversation` drops prompt n and everything after it (its text comes back to the input line).
 * When a file was changed by something else since the tools last wrote it, nothing is rewound
 * (files or conversation) and the files are named; `force` overwrites them. Returns the prompt's
 * text when the conversation was rewound.
 */
export async function rewindCommand(options: {
  session: Session;
  argument: string;
  line: (text: string) => void;
  /** Writes the session file (after the conversation changed). */
  save: () => Promise<void>;
}): Promise<string | undefined> {
  const { session, line } = options;
  const points = rewindPoints(session);
  const words = options.argument.split(/\s+/).filter((word) => word !== '');
  if (words.length === 0) {
    if (points.length === 0) {
      line('nothing to rewind: no prompt yet');
      return undefined;
    }
    line(
      'Earlier prompts (newest last); /rewind <n> [both|code|conversation] goes back to just before one:',
    );
    points.forEach((point, number) => {
      const files =
        point.files.length === 0
          ? 'no file changed since'
          : `${point.files.length} file${point.files.length === 1 ? '' : 's'} changed since`;
      line(
        `  ${String(number + 1).padStart(2)}. ${clock(point.timestamp)}  ${oneLine(point.text, 70)} — ${files}`,
      );
    });
    line(untracked);
    return undefined;
  }
  const force = words.at(-1) === 'force' && words.length > 1;
  if (force) words.pop();
  const [which = '', what = 'both', ...extra] = words;
  const point = /^\d+$/.test(which) ? points[Number(which) - 1] : undefined;
  if (point === undefined || extra.length > 0 || !['both', 'code', 'conversation'].includes(what)) {
    line(
      point === undefined && /^\d+$/.test(which) ? `no prompt ${which}; /rewind lists them` : usage,
    );
    return undefined;
  }
  const target = what as RewindTarget;
  if (target !== 'conversation') {
    const outcome = await session.checkpoints.restoreTo(point.index, { force });
    const shown = (path: string) => relative(session.cwd, path) || path;
    if (outcome.changedOutside.length > 0) {
      for (const path of outcome.changedOutside)
        line(`  ${shown(path)} was changed since the agent last wrote it`);
      const count = outcome.changedOutside.length;
      line(
        `nothing rewound: ${count === 1 ? 'this file was' : `these ${count} files were`} changed outside the file tools (by you, bash or another program) after prompt ${which}, and putting ${count === 1 ? 'it' : 'them'} back would lose that. /rewind ${which} ${what} force overwrites ${count === 1 ? 'it' : 'them'}.`,
      );
      return undefined;
    }
    for (const path of outcome.restored) line(`  restored ${shown(path)}`);
    for (const path of outcome.removed) line(`  removed ${shown(path)} (it did not exist then)`);
    for (const failure of outcome.failed)
      line(`  could not restore ${shown(failure.path)}: ${failure.reason}`);
    const changed = outcome.restored.length + outcome.removed.length;
    line(
      `files: ${changed === 0 && outcome.failed.length === 0 ? 'none changed since that prompt' : `${changed} put back as they were before prompt ${which}`}. ${untracked}`,
    );
  }
  if (target === 'code') return undefined;
  const messages = session.agent.messages.slice(0, point.index);
  session.replaceAgent({
    messages,
    // A summary of messages still there stays; one reaching past the cut goes.
    compactions: session.agent.compactions.filter(
      (compaction) => compaction.firstKeptIndex <= point.index,
    ),
  });
  await session.checkpoints.conversationCut(point.index);
  // Written before it is said: the file on disk matches what the line reports.
  try {
    await options.save();
  } catch (error) {
    line(`error: ${errorMessage(error)}`);
  }
  line(
    `conversation: back to just before prompt ${which} (${messages.length} message${messages.length === 1 ? '' : 's'} kept); its text is in the input line`,
  );
  return point.text;
}

function clock(timestamp: number): string {
  const date = new Date(timestamp);
  return `${String(date.getHours()).padStart(2, '0')}:${String(date.getMinutes()).padStart(2, '0')}`;
}

function oneLine(text: string, width: number): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > width ? `${line.slice(0, width - 1)}…` : line;
}
