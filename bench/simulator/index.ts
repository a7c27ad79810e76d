export { startSimulator, type SimulatorHandle } from './server.js';
