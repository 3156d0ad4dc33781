// CPU time and peak memory of processes, from /proc (Linux): utime + stime of /proc/<pid>/stat, VmHWM and
// VmRSS of /proc/<pid>/status.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

let ticksPerSecond: number | undefined;
function clockTicks(): number {
  if (ticksPerSecond === undefined) {
    try {
      ticksPerSecond = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
    } catch {
      ticksPerSecond = 100;
    }
  }
  return ticksPerSecond;
}

/** User + system CPU seconds of a process so far (undefined if it is gone). */
export function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the ")" that closes the command name: state is field 3, utime 14, stime 15.
    const rest = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const utime = Number(rest[11]);
    const stime = Number(rest[12]);
    return (utime + stime) / clockTicks();
  } catch {
    return undefined;
  }
}

function statusMb(pid: number, field: "VmHWM" | "VmRSS"): number | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const m = new RegExp(`^${field}:\\s+(\\d+)\\s+kB`, "m").exec(status);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Peak resident set (VmHWM) in MB (undefined if the process is gone). */
export const peakRssMb = (pid: number) => statusMb(pid, "VmHWM");

/**
 * Starts a new peak: VmHWM drops to the current resident set (Linux ≥ 4.0, `clear_refs` 5), so a later
 * `peakRssMb` is the peak of what came since. False when the kernel refused.
 */
export function resetPeakRss(pid: number): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, "5");
    return true;
  } catch {
    return false;
  }
}

/** Current resident set (VmRSS) in MB (undefined if the process is gone). */
export const rssMb = (pid: number) => statusMb(pid, "VmRSS");

/** Pid from a pid file, if the process is alive. */
export function pidFromFile(file: string): number | undefined {
  try {
    const pid = Number(readFileSync(file, "utf8").trim());
    return pid > 0 && cpuSeconds(pid) !== undefined ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Waits until a process has used less than `maxShare` of a core over `windowMs` (at most `timeoutMs`), and
 * returns how long that took: a phase timed right after another must not pay for the first one's leftovers
 * (MariaDB flushing dirty pages or purging old row versions after an ingest). bench:sync prints the wait;
 * on 2026-12-04 the server was quiet within the first second every time.
 */
export async function untilQuiet(pid: number, { maxShare = 0.05, windowMs = 1000, timeoutMs = 60_000 } = {}): Promise<number> {
  const t0 = performance.now();
  for (;;) {
    const before = cpuSeconds(pid);
    await new Promise((r) => setTimeout(r, windowMs));
    const after = cpuSeconds(pid);
    if (before === undefined || after === undefined) return 0;
    const waited = performance.now() - t0;
    if ((after - before) / (windowMs / 1000) < maxShare || waited >= timeoutMs) return waited / 1000;
  }
}
