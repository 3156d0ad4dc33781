// How the benchmarks run the services: compiled from dist/, as they are deployed (docker/Dockerfile runs
// `node dist/services/<name>/main.js`), unless `--tsx` (or BENCH_TSX=1) asks for the sources under tsx as
// the tests run them. Compiling happens once, before anything is measured.
import { execFileSync } from "node:child_process";
import { fileURLToPath } from "node:url";

const ROOT = fileURLToPath(new URL("..", import.meta.url));

export function benchRuntime(): { compiled: boolean; label: string } {
  const tsx = process.argv.includes("--tsx") || process.env.BENCH_TSX === "1";
  return tsx ? { compiled: false, label: "sources under tsx" } : { compiled: true, label: "compiled (dist/, as deployed)" };
}

/** Builds dist/ when the services are to run compiled. */
export function prepareRuntime(log: (msg: string) => void): { compiled: boolean; label: string } {
  const runtime = benchRuntime();
  if (runtime.compiled) {
    log("building dist/ (npm run build) so the services run as deployed; --tsx skips this");
    execFileSync("npm", ["run", "--silent", "build"], { cwd: ROOT, stdio: ["ignore", "ignore", "inherit"] });
  }
  return runtime;
}
