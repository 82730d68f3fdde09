export {
  anyUserDirectory,
  copyForAnyUser,
  nodeForAnyUser,
  stagePackagesForAnyUser,
} from './any-user.js';
export { LeftoverProcesses, processStartTime, signalIfSame } from './leftover-processes.js';
export {
  curlAs,
  nobodyUid,
  type RecordingServer,
  recordingServerAs,
} from './other-user-server.js';
export { canHandOverPids, exitSignal, spawnAtPid } from './pid-handover.js';
export { type SkippableContext, skipWithout } from './skip-without.js';
export {
  installCommand,
  isCi,
  type MissingSystemTool,
  missingSystemTools,
  preflightMessage,
  readSkipRecords,
  type SkipRecord,
  type SystemToolCommand,
  summarizeSkips,
  systemToolProblem,
} from './system-tools.mjs';
