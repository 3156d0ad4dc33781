// Per-process CPU and peak memory of the billing mesh, from /proc (bench/procstat.ts): measured from
// outside so the services need no instrumentation; utime+stime include every thread (the billing
// service renders PDFs on worker threads).
import { cpuSeconds, peakRssMb, rssMb } from "../procstat.js";

export { pidFromFile } from "../procstat.js";

export interface ProcSample {
  cpuSeconds: number;
  /** VmHWM: peak resident set since the process started. */
  peakRssMb: number;
  rssMb: number;
}

export function procSample(pid: number): ProcSample {
  const cpu = cpuSeconds(pid);
  if (cpu === undefined) throw new Error(`process ${pid} is gone`);
  return { cpuSeconds: cpu, peakRssMb: peakRssMb(pid) ?? Number.NaN, rssMb: rssMb(pid) ?? Number.NaN };
}
