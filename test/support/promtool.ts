import { spawnSync } from "node:child_process";

/**
 * `promtool check metrics` over a scrape: Prometheus' own linter (counters end in _total and only they
 * do, base units such as seconds). promtool comes with Debian's `prometheus` package, which
 * `bash scripts/stack.sh install` installs when it is missing.
 */
export function promtoolCheckMetrics(text: string): { status: number | null; problems: string } {
  const r = spawnSync("promtool", ["check", "metrics"], { input: text, encoding: "utf8" });
  if (r.error) throw new Error(`promtool is required (apt-get install prometheus, or bash scripts/stack.sh install): ${r.error.message}`);
  return { status: r.status, problems: (r.stdout + r.stderr).trim() };
}
