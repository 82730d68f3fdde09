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
  parseSkillFile,
  type Skill,
  type SkillDiscovery,
  skillFiles,
} from './skills.js';
