export { measureSelf, resetPeakRss, peakRssBytes, cpuMsSince, timed, processTreeCpuMs, parseBashTimes, type SelfMeasurement, type Timed, type BashTimes } from './measure.js';
export { formatTable, formatMarkdownTable, type TableRow, type TableOptions } from './table.js';
export { startSimulatorProcess, fetchSimulatorStats, resetSimulator, simulatorOrigin, childEnvironment, projectRoot, type SimulatorProcess } from './simulator-process.js';
export { loadHealthBenchItems, toPromptfooItems, countCriteria, defaultHealthBenchFile, type BenchItem } from './healthbench.js';
export { readItemsFile } from './items-file.js';
