export { runHealthBenchLayout } from './run.js';
