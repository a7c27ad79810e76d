export { runPromptfoo, measurePromptfooStartup, promptfooEnvironment, type RunPromptfooOptions, type PromptfooRunResult, type PromptfooStartup, type ProcessCost } from './run.js';
export { buildPromptfooConfig, promptfooConfigYaml, protectFromNunjucks, readPromptfooOutput, type PromptfooItem, type PromptfooMismatch } from './config.js';
export { ensurePromptfoo, isPromptfooInstalled, defaultPromptfooInstallDirectory, promptfooVersion, type PromptfooInstall } from './install.js';
