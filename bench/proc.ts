/** What the kernel says about a process: CPU time (utime + stime) and resident memory. */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

let clockTicks: number | undefined;

/** Clock ticks per second of /proc/<pid>/stat times (CLK_TCK, 100 on Linux almost everywhere). */
export function ticksPerSecond(): number {
  if (clockTicks === undefined) {
    try {
      clockTicks = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clockTicks = 100;
    }
  }
  return clockTicks;
}

/** utime + stime of a process, in milliseconds. */
export function cpuMs(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
  // Fields after the command name (which may contain spaces) in parentheses; utime is field 14, stime 15.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return (ticks * 1000) / ticksPerSecond();
}

/**
 * A field of /proc/<pid>/status in kB: VmHWM (peak resident set), VmRSS, and its parts RssAnon (the
 * process's own memory) and RssFile (mapped files: the code, and the SQLite database read through
 * its memory map, which is the kernel's page cache and shared, not memory the process holds alone).
 */
export function statusKb(pid: number, field: 'VmHWM' | 'VmRSS' | 'RssAnon' | 'RssFile'): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8');
  const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
  return match === null ? Number.NaN : Number(match[1]);
}

/** CPU time of every PostgreSQL process on the machine (backends, writer, WAL), in ms, by pid. */
export function postgresCpuByPid(): Map<number, number> {
  const byPid = new Map<number, number>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const comm = fs.readFileSync(`/proc/${entry}/comm`, 'utf8').trim();
      if (comm === 'postgres' || comm.startsWith('postgres:')) byPid.set(Number(entry), cpuMs(Number(entry)));
    } catch {
      // The process ended while we looked.
    }
  }
  return byPid;
}

/**
 * PostgreSQL CPU spent between two snapshots: the growth of every process alive at the end (a process
 * started meanwhile counts in full). A backend that exited meanwhile is lost, so this may undercount.
 */
export function postgresCpuSince(before: Map<number, number>): number {
  let total = 0;
  for (const [pid, ms] of postgresCpuByPid()) total += ms - (before.get(pid) ?? 0);
  return total;
}

export function machine(): { cpu: string; cores: number; memoryGiB: number; node: string; kernel: string } {
  const cpuinfo = fs.readFileSync('/proc/cpuinfo', 'utf8');
  const model = /^model name\s*:\s*(.+)$/m.exec(cpuinfo)?.[1] ?? 'unknown';
  const cores = (cpuinfo.match(/^processor\s*:/gm) ?? []).length;
  const memKb = Number(/^MemTotal:\s+(\d+)/m.exec(fs.readFileSync('/proc/meminfo', 'utf8'))?.[1] ?? 0);
  let kernel = 'unknown';
  try {
    kernel = fs.readFileSync('/proc/sys/kernel/osrelease', 'utf8').trim();
  } catch {
    // not Linux
  }
  return {
    cpu: model,
    cores,
    memoryGiB: Math.round((memKb / 1024 / 1024) * 10) / 10,
    node: process.version,
    kernel,
  };
}
