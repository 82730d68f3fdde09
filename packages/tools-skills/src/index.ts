export {
  createSkillTool,
  type LoadedSkillTool,
  loadSkillTool,
  type SkillToolOptions,
  skillToolName,
} from './skill-tool.js';
export {
  defaultSkillRoots,
  discoverSkills,
  maxSkillFileBytes,
  maxSkillsPerRoot,
  parseSkillFile,
  readSkillFile,
  type Skill,
  type SkillDiscovery,
  SkillFileError,
  skillFiles,
} from './skills.js';
