// Per-process CPU and peak memory from /proc (Linux): what each service of the mesh spent, measured
// from outside so the services need no instrumentation. utime+stime include every thread (the
// billing service renders PDFs on worker threads).
import { readFileSync } from "node:fs";

const TICKS_PER_SECOND = 100; // USER_HZ: 100 on every Linux ABI Node supports

export interface ProcSample {
  cpuSeconds: number;
  /** VmHWM: peak resident set since the process started. */
  peakRssMb: number;
  rssMb: number;
}

function statusKb(text: string, field: string): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(text);
  return m ? Number(m[1]) : Number.NaN;
}

export function procSample(pid: number): ProcSample {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // The command name (field 2) may hold spaces and parentheses: count fields after its last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  const utime = Number(fields[11]);
  const stime = Number(fields[12]);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  return { cpuSeconds: (utime + stime) / TICKS_PER_SECOND, peakRssMb: statusKb(status, "VmHWM") / 1024, rssMb: statusKb(status, "VmRSS") / 1024 };
}

/** The pid in a pid file, when the process is alive and readable (the stack's NATS and MariaDB). */
export function pidFromFile(path: string): number | undefined {
  try {
    const pid = Number(readFileSync(path, "utf8").trim());
    readFileSync(`/proc/${pid}/stat`);
    return pid;
  } catch {
    return undefined;
  }
}
