// A private nats-server (JetStream, file store) per test, for tests that restart or kill the server.
// The shared stack's server (NATS_URL) is for tests that only need a server.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

export interface PrivateNats {
  url: string;
  port: number;
  /** Stops the server (SIGTERM by default) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and store directory: JetStream state survives. */
  start(): Promise<void>;
  /** Stops it and deletes its store. */
  destroy(): Promise<void>;
}

async function waitHealthy(monitorPort: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      const res = await fetch(`http://127.0.0.1:${monitorPort}/healthz?js-enabled-only=true`);
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error("private nats-server did not become healthy");
}

export async function startPrivateNats(): Promise<PrivateNats> {
  const [port, monitorPort] = [await freePort(), await freePort()];
  const storeDir = mkdtempSync(join(tmpdir(), "malha-nats-"));
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn("nats-server", ["-a", "127.0.0.1", "-p", String(port), "-m", String(monitorPort), "-js", "-sd", storeDir], {
      stdio: "ignore",
    });
    await waitHealthy(monitorPort);
  };
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()));
    p.kill(signal);
    await exited;
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    port,
    stop,
    start,
    async destroy() {
      await stop("SIGKILL");
      rmSync(storeDir, { recursive: true, force: true });
    },
  };
}
