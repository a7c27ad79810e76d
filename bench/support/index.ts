export { peakRssBytes, parseBashTimes } from './measure.js';
export { startSimulatorProcess, childEnvironment, type SimulatorProcess } from './simulator-process.js';
