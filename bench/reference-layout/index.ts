export { runHealthBenchLayout, parseGraderReply, healthBenchScore, type HealthBenchLayoutItem, type HealthBenchLayoutResult, type RunHealthBenchLayoutOptions, type HealthBenchLayoutMismatch } from './run.js';
export {
  buildGraderMessages,
  renderGraderPrompt,
  renderConversation,
  renderRubricItem,
  healthBenchStandInTemplate,
  healthBenchLayoutMarker,
  healthBenchSystemMessage,
  healthBenchGraderModel,
  originalTemplateTokenCount,
} from './template.js';
