// Node 20 refuses --cpu-prof in NODE_OPTIONS, but accepts --import: this preload does the same thing
// (V8 sampling profiler via node:inspector) and writes <BENCH_CPU_PROF_DIR>/<service>-<pid>.cpuprofile
// on exit. The benches start services with NODE_OPTIONS="--import <this file>" when profiling. Main
// thread only: worker threads (billing's PDF renderers) inherit NODE_OPTIONS but are not profiled.
import { Session } from "node:inspector";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { isMainThread } from "node:worker_threads";

const dir = process.env.BENCH_CPU_PROF_DIR;
if (isMainThread && dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 1000 });
  session.post("Profiler.start");
  const service = (process.argv[1] ?? "node").split("/").at(-2);
  process.on("exit", () => {
    // The in-thread session answers synchronously, so this runs to completion inside the exit handler.
    session.post("Profiler.stop", (err, res) => {
      if (err) return;
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, `${service}-${process.pid}.cpuprofile`), JSON.stringify(res.profile));
    });
  });
}
