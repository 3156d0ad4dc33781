// A private MariaDB (5.6-like flags, like scripts/stack.sh) per test, for tests that restart the
// database under a running mesh. The shared stack's server is for tests that only need a database.
import { execFile, spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "./ports.js";

export interface PrivateMariaDb {
  url: string;
  stop(signal?: NodeJS.Signals): Promise<void>;
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const run = (cmd: string, args: string[]) =>
  new Promise<void>((resolve, reject) =>
    execFile(cmd, args, (err, _out, stderr) => (err ? reject(new Error(`${cmd} failed: ${stderr}`)) : resolve())),
  );

export async function startPrivateMariaDb(): Promise<PrivateMariaDb> {
  const dir = mkdtempSync(join(tmpdir(), "malha-mariadb-"));
  const port = await freePort();
  const sock = join(dir, "mysqld.sock");
  const user = process.getuid?.() === 0 ? ["--user=root"] : [];
  await run("mariadb-install-db", [
    "--no-defaults",
    ...user,
    `--datadir=${dir}/data`,
    "--skip-test-db",
    "--auth-root-authentication-method=socket",
  ]);
  let proc: ChildProcess | undefined;
  const start = async () => {
    proc = spawn(
      "mariadbd",
      [
        "--no-defaults",
        ...user,
        `--datadir=${dir}/data`,
        `--socket=${sock}`,
        `--port=${port}`,
        "--bind-address=127.0.0.1",
        "--skip-name-resolve",
        `--log-error=${dir}/error.log`,
        "--innodb-buffer-pool-size=64M",
        "--innodb-log-file-size=16M",
        "--character-set-server=utf8mb4",
        "--collation-server=utf8mb4_unicode_ci",
        "--sql-mode=STRICT_TRANS_TABLES,NO_ENGINE_SUBSTITUTION",
        "--innodb-default-row-format=compact",
        "--explicit-defaults-for-timestamp=OFF",
        "--max-allowed-packet=64M",
      ],
      { stdio: "ignore" },
    );
    for (let i = 0; i < 400; i++) {
      try {
        await run("mariadb", ["--no-defaults", "-S", sock, "-uroot", "-e", "select 1"]);
        return;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    throw new Error("private mariadb did not start");
  };
  const stop = async (signal: NodeJS.Signals = "SIGTERM") => {
    const p = proc;
    if (!p || p.exitCode !== null || p.signalCode !== null) return;
    const exited = new Promise<void>((resolve) => p.once("exit", () => resolve()));
    p.kill(signal);
    await exited;
  };
  await start();
  await run("mariadb", [
    "--no-defaults",
    "-S",
    sock,
    "-uroot",
    "-e",
    "CREATE DATABASE malha CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci; " +
      "CREATE USER 'malha'@'127.0.0.1' IDENTIFIED BY 'malha'; GRANT ALL ON malha.* TO 'malha'@'127.0.0.1';",
  ]);
  return {
    url: `mysql://malha:malha@127.0.0.1:${port}/malha`,
    stop,
    start,
    async destroy() {
      await stop("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
