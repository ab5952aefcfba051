import { readdirSync, readFileSync } from 'node:fs';

/** /proc counts CPU in clock ticks: 100 a second on Linux. */
const MICROS_PER_TICK = 10_000;

/** A process as /proc/<pid>/stat shows it: its parent, and the CPU time (user + system, µs) it has used. */
export interface ProcessCpu {
  ppid: number;
  micros: number;
}

/** `pid`'s line of /proc; undefined where there is none (gone, or no /proc). */
export function processCpu(pid: number): ProcessCpu | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may hold spaces: the fields are counted after it.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { ppid: Number(fields[1]), micros: (Number(fields[11]) + Number(fields[12])) * MICROS_PER_TICK };
  } catch {
    return undefined;
  }
}

/** The CPU time (user + system, µs) the whole machine spent busy so far, from /proc/stat; NaN where there is none. */
export function machineBusyMicros(): number {
  try {
    const [, user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0].trim().split(/\s+/).map(Number);
    return (user + nice + system + irq + softirq + steal) * MICROS_PER_TICK;
  } catch {
    return NaN;
  }
}

/** The CPU time (µs) of `pid` and every process below it so far, from /proc; NaN where there is none. */
export function processTreeMicros(pid: number): number {
  let pids: number[];
  try {
    pids = readdirSync('/proc').filter((name) => /^\d+$/.test(name)).map(Number);
  } catch {
    return NaN;
  }
  const stats = pids.flatMap((each) => {
    const cpu = processCpu(each);
    return cpu ? [{ pid: each, ...cpu }] : [];
  });
  const tree = new Set([pid]);
  for (let size = 0; tree.size !== size; ) {
    size = tree.size;
    for (const stat of stats) if (tree.has(stat.ppid)) tree.add(stat.pid);
  }
  const inTree = stats.filter((stat) => tree.has(stat.pid));
  return inTree.length ? inTree.reduce((sum, stat) => sum + stat.micros, 0) : NaN;
}
