// The README's first command, for real: the local stack, the ADN simulator, the services, the demo
// municipalities registered with certificates in the vault, synced through the whole mesh. Both tests
// bind the mesh's fixed ports, so they live in this one file (vitest runs a file's tests in order).
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { freePort } from "../support/ports.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** Every process below `root` right now (by /proc parent links). */
function descendants(root: number): number[] {
  const parentOf = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ")".
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (pid: number) => {
    for (const [child, parent] of parentOf) if (parent === pid) out.push(child), walk(child);
  };
  walk(root);
  return out;
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("quickstart", () => {
  it("`npm start` brings the mesh up and syncs the demo municipalities", async () => {
    const { code, out } = await new Promise<{ code: number; out: string }>((resolve) =>
      execFile("npm", ["start", "--", "--exit-when-synced"], { cwd: ROOT, timeout: 280_000 }, (err, stdout, stderr) =>
        resolve({ code: err ? Number(err.code ?? 1) : 0, out: stdout + stderr }),
      ),
    );
    expect(code, out.slice(-3000)).toBe(0);
    expect(out).toMatch(/vault\s+SERVING/);
    expect(out).toMatch(/billing\s+SERVING/);
    expect(out).toMatch(/console\s+SERVING/);
    expect(out).toMatch(/danfse\s+SERVING/);
    // On a fresh machine each sync starts; on a re-run the one-hour rule skips feeds already caught up.
    for (const ibge of ["3550308", "3304557", "4106902"]) expect(out).toMatch(new RegExp(`demo: ${ibge} sync (started|skipped)`));
    expect(out).toContain("demo: every demo municipality is synced");
    // Billing through the dev stack's tenant token: three boletos with PDFs and a zip.
    expect(out).toMatch(/demo: boleto job \S+ for tenant demo completed: 3 PDFs, zip \d+ bytes/);
  }, 300_000);

  it("SIGTERM to npm's own process (a supervisor's `timeout npm start`) stops everything; the banner and the logs tell the truth", async () => {
    // A stack of its own on free ports, so this run starts (and must stop) NATS and MariaDB too.
    const base = mkdtempSync(join(tmpdir(), "malha-quickstart-"));
    const stackDir = join(base, "stack");
    const [natsPort, natsMonPort, mysqlPort] = [await freePort(), await freePort(), await freePort()];
    const env = {
      ...process.env,
      MALHA_STACK_DIR: stackDir,
      MALHA_NATS_PORT: String(natsPort),
      MALHA_NATS_MON_PORT: String(natsMonPort),
      MALHA_MYSQL_PORT: String(mysqlPort),
      MALHA_DEMO_MUNICIPIOS: "3550308",
      MALHA_DEMO_FEED_SIZE: "40",
    };
    // Its own process group: the signal goes to npm's pid alone, as `kill <pid>` from a supervisor would.
    const npm = spawn("npm", ["start"], { cwd: ROOT, env, detached: true, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    npm.stdout!.on("data", (c: Buffer) => (out += c.toString()));
    npm.stderr!.on("data", (c: Buffer) => (out += c.toString()));
    const exited = new Promise<number | null>((resolve) => npm.once("exit", (code, signal) => resolve(code ?? (signal ? 128 : null))));
    let pids: number[] = [];
    try {
      for (let i = 0; !out.includes("Press Ctrl-C to stop everything."); i++) {
        if (i > 2400 || npm.exitCode !== null) throw new Error(`npm start did not come up:\n${out.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
      // First of all (the finally kills them whatever fails below).
      const pidFiles = [join(stackDir, "nats.pid"), join(stackDir, "mysql/mysqld.pid")];
      pids = [...descendants(npm.pid!), ...pidFiles.map((f) => Number(readFileSync(f, "utf8").trim()))];
      // The banner's commands follow the stack's ports.
      expect(out).toContain(`mariadb -h127.0.0.1 -P${mysqlPort} -umalha`);
      expect(out).toContain(`MYSQL_URL=mysql://malha:malha@127.0.0.1:${mysqlPort}/malha`);
      // npm, the shell it execs, the simulator, the services, NATS and MariaDB at least.
      expect(pids.length).toBeGreaterThanOrEqual(9);

      process.kill(npm.pid!, "SIGTERM");
      expect(await exited).not.toBe(0);
      for (let i = 0; i < 300 && pids.some(alive); i++) await new Promise((r) => setTimeout(r, 100));
      expect(pids.filter(alive), "still running after npm stopped").toEqual([]);
      expect(existsSync(stackDir)).toBe(false);

      // The last words point at logs that are still there.
      const logs = /stopped; logs kept in (\S+)/.exec(out)?.[1];
      expect(logs, out.slice(-2000)).toBe(`${stackDir}-logs`);
      expect(readdirSync(logs!).sort()).toEqual(
        ["adn-gateway", "adn-sim", "artifacts", "billing", "console", "coordinator", "danfse", "store", "vault"].map((n) => `${n}.log`),
      );
      expect(readFileSync(join(logs!, "coordinator.log"), "utf8")).toContain('"msg":"serving"');
    } finally {
      for (const pid of [npm.pid!, ...pids]) if (alive(pid)) process.kill(pid, "SIGKILL");
      rmSync(base, { recursive: true, force: true });
    }
  }, 300_000);
});
