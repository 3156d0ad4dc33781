// Every replica, on a timer: exports whose process stopped heartbeating become FAILED INTERRUPTED (so
// none stays RUNNING forever after a crash), and export rows older than their zips are deleted.
import type { Logger } from "../../libs/log/logger.js";
import type { ExportRepo } from "./export-repo.js";

export function startSweep(p: {
  repo: ExportRepo;
  log: Logger;
  intervalMs: number;
  staleMs: number;
  keepMs: number;
  onInterrupted?: (n: number) => void;
}): { stop(): void } {
  let busy = false;
  const tick = async () => {
    if (busy) return;
    busy = true;
    try {
      const interrupted = await p.repo.interruptStale(p.staleMs);
      if (interrupted > 0) {
        p.onInterrupted?.(interrupted);
        p.log.warn({ interrupted }, "exports whose process stopped marked INTERRUPTED");
      }
      await p.repo.purgeFinishedBefore(new Date(Date.now() - p.keepMs));
    } catch (err) {
      p.log.warn({ err }, "export sweep failed; retried on the next tick");
    } finally {
      busy = false;
    }
  };
  void tick();
  const timer = setInterval(() => void tick(), p.intervalMs);
  timer.unref();
  return { stop: () => clearInterval(timer) };
}
