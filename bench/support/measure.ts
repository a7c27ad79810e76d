/**
 * Resource measurement for benchmarks: peak memory and CPU of this process, CPU of child
 * process trees (from `/proc` or bash's `times`), and wall/CPU timing of a piece of work.
 */
import { readFileSync, readdirSync, writeFileSync } from 'node:fs';

export interface SelfMeasurement {
  /** Peak resident set size of this process (VmHWM), in bytes. */
  peakRssBytes: number;
  peakRssMb: number;
  /** Current resident set size, in bytes. */
  rssBytes: number;
  cpuUserMs: number;
  cpuSystemMs: number;
  /** user + system since process start. */
  cpuMs: number;
}

const kilobyte = 1024;

function statusField(name: string): number | undefined {
  try {
    const status = readFileSync('/proc/self/status', 'utf8');
    const match = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(status);
    return match ? Number(match[1]) * kilobyte : undefined;
  } catch {
    return undefined;
  }
}

/** Peak RSS in bytes: `/proc/self/status` VmHWM where available, else `resourceUsage().maxRSS`. */
export function peakRssBytes(): number {
  return statusField('VmHWM') ?? process.resourceUsage().maxRSS * kilobyte;
}

/**
 * Resets the kernel's peak-RSS mark to the current RSS (Linux: writing 5 to clear_refs), so a
 * later `measureSelf()` reports the peak of one phase. Returns false where unsupported, in
 * which case peaks stay process-wide.
 */
export function resetPeakRss(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}

export function measureSelf(): SelfMeasurement {
  const cpu = process.cpuUsage();
  const peak = peakRssBytes();
  return {
    peakRssBytes: peak,
    peakRssMb: Math.round((peak / (kilobyte * kilobyte)) * 10) / 10,
    rssBytes: process.memoryUsage.rss(),
    cpuUserMs: cpu.user / 1000,
    cpuSystemMs: cpu.system / 1000,
    cpuMs: (cpu.user + cpu.system) / 1000,
  };
}

/** CPU (user + system, ms) this process used since `start` (a `process.cpuUsage()` value). */
export function cpuMsSince(start: NodeJS.CpuUsage): number {
  const used = process.cpuUsage(start);
  return (used.user + used.system) / 1000;
}

export interface Timed<T> {
  value: T;
  wallMs: number;
  /** CPU of this process only. */
  cpuMs: number;
}

/** Runs `work` and reports its wall time and this process's CPU time. */
export async function timed<T>(work: () => Promise<T> | T): Promise<Timed<T>> {
  const cpuStart = process.cpuUsage();
  const wallStart = performance.now();
  const value = await work();
  return { value, wallMs: performance.now() - wallStart, cpuMs: cpuMsSince(cpuStart) };
}

/** `/proc/<pid>/stat` counts CPU in clock ticks: 100 per second on Linux. */
const clockTicksPerSecond = 100;

interface ProcStat {
  pid: number;
  parent: number;
  cpuMs: number;
  /** CPU of waited-for (reaped) children. */
  childrenCpuMs: number;
}

function readProcStat(pid: number): ProcStat | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name is parenthesised and may contain spaces; fields resume after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    const tick = 1000 / clockTicksPerSecond;
    return {
      pid,
      parent: Number(fields[1]),
      cpuMs: (Number(fields[11]) + Number(fields[12])) * tick,
      childrenCpuMs: (Number(fields[13]) + Number(fields[14])) * tick,
    };
  } catch {
    return undefined;
  }
}

/**
 * CPU (ms) of a live process and all its live descendants, plus what they already collected
 * from reaped children. Resolution is one clock tick (10 ms). Returns 0 where `/proc` is absent.
 */
export function processTreeCpuMs(rootPid: number): number {
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return 0;
  }
  const children = new Map<number, number[]>();
  const stats = new Map<number, ProcStat>();
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = readProcStat(Number(entry));
    if (!stat) continue;
    stats.set(stat.pid, stat);
    const siblings = children.get(stat.parent) ?? [];
    siblings.push(stat.pid);
    children.set(stat.parent, siblings);
  }
  let total = 0;
  const pending = [rootPid];
  while (pending.length > 0) {
    const pid = pending.pop() as number;
    const stat = stats.get(pid);
    if (!stat) continue;
    total += stat.cpuMs + stat.childrenCpuMs;
    pending.push(...(children.get(pid) ?? []));
  }
  return total;
}

export interface BashTimes {
  shellUserMs: number;
  shellSystemMs: number;
  /** Accumulated over all waited-for descendants of the shell. */
  childrenUserMs: number;
  childrenSystemMs: number;
}

function minutesSeconds(minutes: string, seconds: string): number {
  return (Number(minutes) * 60 + Number(seconds)) * 1000;
}

/** Parses the two lines bash's `times` builtin prints (`0m1.234s 0m0.056s`). */
export function parseBashTimes(text: string): BashTimes | undefined {
  const pattern = /(\d+)m([\d.]+)s\s+(\d+)m([\d.]+)s/g;
  const lines = [...text.matchAll(pattern)];
  if (lines.length < 2) return undefined;
  const [shell, children] = lines;
  return {
    shellUserMs: minutesSeconds(shell[1], shell[2]),
    shellSystemMs: minutesSeconds(shell[3], shell[4]),
    childrenUserMs: minutesSeconds(children[1], children[2]),
    childrenSystemMs: minutesSeconds(children[3], children[4]),
  };
}

/** What a child process measured of itself as it exited (`exitReportArgs`). */
export interface ExitReport {
  cpuUserMs: number;
  cpuSystemMs: number;
  /** user + system over the whole process, start-up included. */
  cpuMs: number;
  peakRssBytes: number;
}

/**
 * Node flags that make a child report its own CPU and peak RSS into `file` as it exits: a
 * preloaded data: module (plain JavaScript, no loader thread), so a built command is measured
 * as it runs installed, start-up and all. Read the report with `readExitReport`.
 */
export function exitReportArgs(file: string): string[] {
  const source = [
    "import { readFileSync, writeFileSync } from 'node:fs';",
    'process.on("exit", () => {',
    '  const cpu = process.cpuUsage();',
    "  const hwm = /^VmHWM:\\s+(\\d+)\\s+kB/m.exec(readFileSync('/proc/self/status', 'utf8'));",
    '  const peak = hwm ? Number(hwm[1]) * 1024 : process.resourceUsage().maxRSS * 1024;',
    `  writeFileSync(${JSON.stringify(file)}, JSON.stringify({ cpuUserMs: cpu.user / 1000, cpuSystemMs: cpu.system / 1000, cpuMs: (cpu.user + cpu.system) / 1000, peakRssBytes: peak }));`,
    '});',
  ].join('\n');
  return ['--import', `data:text/javascript,${encodeURIComponent(source)}`];
}

export function readExitReport(file: string): ExitReport {
  return JSON.parse(readFileSync(file, 'utf8')) as ExitReport;
}

/** CPU (user + system, ms) of this process's threads: its JavaScript (main) thread and all others (V8's compiler and GC helpers, libuv's pool). */
export interface ThreadCpu {
  mainMs: number;
  otherMs: number;
}

/** This process's CPU by thread from `/proc/self/task` (clock-tick resolution, 10 ms); undefined where `/proc` is absent. */
export function threadCpuMs(): ThreadCpu | undefined {
  let tasks: string[];
  try {
    tasks = readdirSync('/proc/self/task');
  } catch {
    return undefined;
  }
  const ticksPerMs = 100 / 1000;
  const split = { mainMs: 0, otherMs: 0 };
  for (const task of tasks) {
    let stat: string;
    try {
      stat = readFileSync(`/proc/self/task/${task}/stat`, 'utf8');
    } catch {
      continue; // a thread that ended meanwhile
    }
    // Fields after the command name (which may hold spaces): utime and stime are the 12th and 13th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ms = (Number(fields[11]) + Number(fields[12])) / ticksPerMs;
    if (task === String(process.pid)) split.mainMs += ms;
    else split.otherMs += ms;
  }
  return split;
}
