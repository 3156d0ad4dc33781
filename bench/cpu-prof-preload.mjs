// Node 20 refuses --cpu-prof in NODE_OPTIONS, but accepts --import: this preload does the same thing
// (V8 sampling profiler via node:inspector) and writes <BENCH_CPU_PROF_DIR>/<service>-<pid>.cpuprofile
// on exit. The benches start services with NODE_OPTIONS="--import <this file>" when profiling. Main
// thread only: worker threads (billing's PDF renderers) inherit NODE_OPTIONS but are not profiled.
// With BENCH_CPU_PROF_WINDOW=signal the profiler waits for SIGUSR2 to start and writes the profile at the
// next SIGUSR2 (or on exit), so a bench can profile one phase of a process that lives through several.
// With BENCH_ALLOC_PROF=1 the same window also samples allocations (V8's sampling heap profiler, objects the
// collector has freed included) into <service>-<pid>.heapprofile: where the garbage comes from
// (bench/alloc-top.ts).
import { Session } from "node:inspector";
import { mkdirSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";

const dir = process.env.BENCH_CPU_PROF_DIR;
if (isMainThread && dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  const service = (process.argv[1] ?? "node").split("/").at(-2);
  const allocations = process.env.BENCH_ALLOC_PROF === "1";
  if (allocations) session.post("HeapProfiler.enable");
  let running = false;
  const start = () => {
    session.post("Profiler.start");
    if (allocations)
      session.post("HeapProfiler.startSampling", {
        samplingInterval: 16384,
        includeObjectsCollectedByMajorGC: true,
        includeObjectsCollectedByMinorGC: true,
      });
    running = true;
  };
  const write = (file, data) => {
    mkdirSync(dir, { recursive: true });
    // Written under another name first: a bench waiting for the file never reads half of it.
    writeFileSync(`${file}.part`, JSON.stringify(data));
    renameSync(`${file}.part`, file);
  };
  // The in-thread session answers synchronously, so this also runs to completion inside an exit handler.
  const stop = () => {
    if (!running) return;
    running = false;
    if (allocations)
      session.post("HeapProfiler.stopSampling", (err, res) => {
        if (!err) write(join(dir, `${service}-${process.pid}.heapprofile`), res.profile);
      });
    session.post("Profiler.stop", (err, res) => {
      if (!err) write(join(dir, `${service}-${process.pid}.cpuprofile`), res.profile);
    });
  };
  if (process.env.BENCH_CPU_PROF_WINDOW === "signal") process.on("SIGUSR2", () => (running ? stop() : start()));
  else start();
  process.on("exit", stop);
}
