import { parseArgs } from "node:util";
import { ConnectError } from "@connectrpc/connect";
import { MESH, type MeshServiceName } from "../../libs/rpc/mesh.js";
import { certificatesExpiring, certificatesImport, certificatesList } from "./certificates.js";
import type { Command, Options } from "./command.js";
import { documentsList } from "./documents.js";
import { EXIT, exitCodeOf, UsageError } from "./exit-codes.js";
import { write, type Io } from "./io.js";
import { municipalitiesAdd, municipalitiesList } from "./municipalities.js";
import { PASSWORD_ENV } from "./password.js";
import { syncAll, syncNow } from "./sync-now.js";
import { syncRuns } from "./sync-runs.js";
import { syncStatus } from "./sync-status.js";
import { Targets, urlVariable } from "./targets.js";

// Billing commands come when the billing service implements its contract (they need a running service to test).
export const COMMANDS: Record<string, Command> = {
  "municipalities add": municipalitiesAdd,
  "municipalities list": municipalitiesList,
  "certificates import": certificatesImport,
  "certificates list": certificatesList,
  "certificates expiring": certificatesExpiring,
  "sync now": syncNow,
  "sync all": syncAll,
  "sync status": syncStatus,
  "sync runs": syncRuns,
  "documents list": documentsList,
};

const SERVICES = Object.keys(MESH) as MeshServiceName[];

const GLOBAL: Options = {
  json: { type: "boolean" },
  help: { type: "boolean", short: "h" },
  "timeout-seconds": { type: "string" },
  ...Object.fromEntries(SERVICES.map((s) => [`${s}-url`, { type: "string" }])),
};

export function help(): string {
  const width = Math.max(...Object.values(COMMANDS).map((c) => c.usage.length));
  return [
    "usage: malha <command> [options]",
    "",
    ...Object.values(COMMANDS).map((c) => `  ${c.usage.padEnd(width)}  ${c.summary}`),
    "",
    "options for every command:",
    "  --json                 machine-readable output (live views: one JSON document per line)",
    "  --timeout-seconds <s>  deadline of each call (default 30)",
    `  --<service>-url <url>  where a service is (default: $${urlVariable("store")} etc., else http://127.0.0.1:<port>)`,
    `                         TLS: https:// URLs with MALHA_TLS_CA_FILE, MALHA_TLS_CERT_FILE, MALHA_TLS_KEY_FILE`,
    `  PFX passwords come from --password-file, $${PASSWORD_ENV} or a prompt, never from an argument.`,
    "",
    "exit codes: 0 ok · 1 RPC error · 2 usage · 3 not found · 4 rejected by the service · 5 unavailable or timed out · 6 denied",
    "",
  ].join("\n");
}

/** Runs one command line; returns the exit code. Never throws. */
export async function run(argv: readonly string[], io: Io): Promise<number> {
  let targets: Targets | undefined;
  try {
    if (argv.some((a) => a === "--password" || a.startsWith("--password="))) {
      throw new UsageError(`the PFX password is never an argument (shell history, ps): use --password-file, ${PASSWORD_ENV} or the prompt`);
    }
    const [group, action] = argv;
    if (group === undefined || group === "help" || group === "--help" || group === "-h") {
      io.out.write(help());
      return group === undefined ? EXIT.USAGE : EXIT.OK;
    }
    const command = COMMANDS[`${group} ${action ?? ""}`];
    if (!command) throw new UsageError(`unknown command "${[group, action].filter(Boolean).join(" ")}"; \`malha help\` lists them`);
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({ args: argv.slice(2), options: { ...GLOBAL, ...command.options }, allowPositionals: true, strict: true });
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
    const { values, positionals } = parsed;
    if (values.help) {
      write(io.out, `usage: malha ${command.usage}\n  ${command.summary}`);
      return EXIT.OK;
    }
    const [min, max] = command.positionals ?? [0, 0];
    if (positionals.length < min || positionals.length > max) throw new UsageError(`usage: malha ${command.usage}`);
    const timeout = Number(values["timeout-seconds"] ?? "30");
    if (!(timeout > 0)) throw new UsageError("--timeout-seconds must be a positive number");
    const urls = Object.fromEntries(SERVICES.flatMap((s) => (typeof values[`${s}-url`] === "string" ? [[s, values[`${s}-url`] as string]] : [])));
    targets = new Targets({ urls, env: io.env, timeoutMs: timeout * 1000 });
    await command.run({ io, targets, values, positionals, json: values.json === true });
    return EXIT.OK;
  } catch (err) {
    const code = exitCodeOf(err);
    const message = err instanceof ConnectError ? err.message : (err as Error).message;
    write(io.err, `malha: ${message}`);
    return code;
  } finally {
    targets?.close();
  }
}
