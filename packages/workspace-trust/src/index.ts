export {
  type PinnableTool,
  type PinStatus,
  ToolPins,
  toolPinDigest,
} from './tool-pins.js';
export {
  type DecideTrustOptions,
  decideTrust,
  describeWithheld,
  type TrustDecision,
  type TrustState,
  type WithheldItem,
  type WithheldReason,
} from './trust-decision.js';
export { type TrustItem, type TrustItemKind, trustItemDigest } from './trust-items.js';
export {
  type EntryForOptions,
  folderIdentity,
  isWholesaleFolder,
  type PinnedItem,
  realFolder,
  type TrustedFolder,
  TrustStore,
} from './trust-store.js';
