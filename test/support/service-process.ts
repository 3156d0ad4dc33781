import { spawn, type ChildProcess } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type MeshServiceName, mallocEnvOf, NODE_FLAGS } from "../../libs/rpc/mesh.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

export interface ServiceProcess {
  proc: ChildProcess;
  port: number;
  metricsPort?: number;
  baseUrl: string;
  /** Every stdout/stderr line so far (JSON log lines and anything else). */
  lines: string[];
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  kill(signal?: NodeJS.Signals): void;
}

/** Env that makes a service safe to start many times in parallel on one machine. */
export const EPHEMERAL_ENV = {
  GRPC_HOST: "127.0.0.1",
  GRPC_PORT: "0",
  METRICS_HOST: "127.0.0.1",
  METRICS_PORT: "0",
  SHUTDOWN_DRAIN_SECONDS: "0.2",
  LOG_LEVEL: "info",
};

export interface SpawnOptions {
  /** Run the compiled `dist/services/<name>/main.js` (after `npm run build`) instead of the source. */
  compiled?: boolean;
  /** Test hooks loaded before the service (`--import`), such as test/support/kill-at.ts. */
  preload?: string[];
}

/** Spawns `services/<name>/main.ts` the way an operator would (a real process, a real socket). */
export function spawnService(
  name: MeshServiceName,
  env: Record<string, string | undefined>,
  opts: SpawnOptions = {},
): {
  proc: ChildProcess;
  lines: string[];
  exited: ServiceProcess["exited"];
} {
  const preload = (opts.preload ?? []).flatMap((m) => ["--import", m]);
  // The service's own V8 flags, as its deployments set them (libs/rpc/mesh.ts NODE_FLAGS).
  const flags = NODE_FLAGS[name] ?? [];
  const args = opts.compiled
    ? [...flags, ...preload, `dist/services/${name}/main.js`]
    : [...flags, "--import", "tsx", ...preload, `services/${name}/main.ts`];
  const proc = spawn(process.execPath, args, {
    cwd: ROOT,
    // The allocator settings its deployments give it (MALLOC_ENV), unless the caller's env says otherwise.
    env: { PATH: process.env.PATH, ...mallocEnvOf(name), ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const lines: string[] = [];
  const collect = (chunk: Buffer) => lines.push(...chunk.toString("utf8").split("\n").filter(Boolean));
  proc.stdout!.on("data", collect);
  proc.stderr!.on("data", collect);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    proc.once("exit", (code, signal) => resolve({ code, signal })),
  );
  return { proc, lines, exited };
}

/** Starts a service and resolves once it logged "serving" with its bound ports. */
export async function startService(
  name: MeshServiceName,
  env: Record<string, string | undefined> = {},
  opts: SpawnOptions = {},
): Promise<ServiceProcess> {
  const { proc, lines, exited } = spawnService(name, { ...EPHEMERAL_ENV, ...env }, opts);
  const serving = await new Promise<{ port: number; metricsPort?: number }>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start:\n${lines.join("\n")}`)), 30_000);
    const poll = setInterval(() => {
      for (const line of lines) {
        if (!line.includes('"msg":"serving"')) continue;
        clearInterval(poll);
        clearTimeout(timer);
        resolve(JSON.parse(line) as { port: number; metricsPort?: number });
        return;
      }
    }, 20);
    void exited.then(({ code }) => {
      clearInterval(poll);
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before serving:\n${lines.join("\n")}`));
    });
  });
  const scheme = env.TLS_CERT_FILE ? "https" : "http";
  return {
    proc,
    lines,
    exited,
    port: serving.port,
    ...(serving.metricsPort !== undefined ? { metricsPort: serving.metricsPort } : {}),
    baseUrl: `${scheme}://127.0.0.1:${serving.port}`,
    kill: (signal = "SIGTERM") => void proc.kill(signal),
  };
}
