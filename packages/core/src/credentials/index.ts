// The credential rules alone, for a caller that must decide before it loads the rest of core
// (the CLI decides at start whether to re-execute itself without its keys).
export {
  type CredentialFilterOptions,
  type CredentialRule,
  credentialFreeEnvironment,
  credentialNameRules,
  credentialRuleOf,
  credentialValueRules,
  type EnvironmentRecord,
  harmlessVariableNames,
  isCredentialVariable,
  withheldVariableNames,
} from '../credential-environment.js';
export { descriptiveHeaderNames, isCredentialHeader } from '../credential-headers.js';
export { looksLikeRandomSecret, randomValueRule } from '../credential-random-value.js';
export { urlWithoutCredentials } from '../credential-url.js';
