// Preloaded into a service (NODE_OPTIONS="--import …"): Node 20 refuses --cpu-prof in NODE_OPTIONS, so
// this starts the V8 profiler through the inspector and writes <service>-<pid>.cpuprofile into
// BENCH_PROFILE_DIR when the process exits (SIGTERM → graceful shutdown → exit). Main thread only.
import { writeFileSync } from "node:fs";
import { Session } from "node:inspector";
import { isMainThread } from "node:worker_threads";

const dir = process.env.BENCH_PROFILE_DIR;
if (isMainThread && dir) {
  const session = new Session();
  session.connect();
  session.post("Profiler.enable");
  session.post("Profiler.setSamplingInterval", { interval: 500 });
  session.post("Profiler.start");
  const name = (process.argv[1] ?? "node").split("/").at(-2);
  process.on("exit", () =>
    session.post("Profiler.stop", (err, res) => {
      if (!err) writeFileSync(`${dir}/${name}-${process.pid}.cpuprofile`, JSON.stringify(res.profile));
    }),
  );
}
