export { runPromptfoo } from './run.js';
