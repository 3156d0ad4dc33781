import { parseArgs } from "node:util";
import { Code, ConnectError } from "@connectrpc/connect";
import { MESH, type MeshServiceName } from "../libs/rpc/mesh.js";
import { TENANT_ENV, TOKEN_ENV } from "./billing-common.js";
import {
  billingRemessasCreate,
  billingRemessasDownload,
  billingRemessasStatus,
  billingRetornosOccurrences,
  billingRetornosUpload,
} from "./billing-cnab.js";
import { billingJobsDownload } from "./billing-download.js";
import { billingTokensNew } from "./billing-tokens.js";
import {
  billingWebhooksDelete,
  billingWebhooksDeliveries,
  billingWebhooksRedeliver,
  billingWebhooksSet,
  billingWebhooksShow,
} from "./billing-webhooks.js";
import { billingJobsCreate, billingJobsItems, billingJobsList, billingJobsStatus } from "./billing-jobs.js";
import { certificatesExpiring, certificatesImport, certificatesList } from "./certificates.js";
import type { Command, Options } from "./command.js";
import { documentsList, documentsShow } from "./documents.js";
import { documentsDanfse } from "./documents-danfse.js";
import { CliFailure, EXIT, exitCodeOf, UsageError } from "./exit-codes.js";
import { json } from "./format.js";
import { write, type Io } from "./io.js";
import { municipalitiesAdd, municipalitiesList } from "./municipalities.js";
import { PASSWORD_ENV } from "./password.js";
import { syncAll, syncNow } from "./sync-now.js";
import { syncRuns } from "./sync-runs.js";
import { syncStatus } from "./sync-status.js";
import { Targets, urlVariable } from "./targets.js";

// Keys are the command's words: two ("sync now") or three ("billing jobs create").
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
  "documents show": documentsShow,
  "documents danfse": documentsDanfse,
  "billing jobs create": billingJobsCreate,
  "billing jobs list": billingJobsList,
  "billing jobs status": billingJobsStatus,
  "billing jobs items": billingJobsItems,
  "billing jobs download": billingJobsDownload,
  "billing remessas create": billingRemessasCreate,
  "billing remessas status": billingRemessasStatus,
  "billing remessas download": billingRemessasDownload,
  "billing retornos upload": billingRetornosUpload,
  "billing retornos occurrences": billingRetornosOccurrences,
  "billing webhooks set": billingWebhooksSet,
  "billing webhooks show": billingWebhooksShow,
  "billing webhooks delete": billingWebhooksDelete,
  "billing webhooks deliveries": billingWebhooksDeliveries,
  "billing webhooks redeliver": billingWebhooksRedeliver,
  "billing tokens new": billingTokensNew,
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
    `  --tenant <tenant>      billing commands act for this tenant (default $${TENANT_ENV})`,
    `  billing commands send the tenant's API token from $${TOKEN_ENV} or $${TOKEN_ENV}_FILE (billing with tenant tokens)`,
    `  PFX passwords come from --password-file, $${PASSWORD_ENV} or a prompt, never from an argument.`,
    "",
    "exit codes: 0 ok · 1 RPC error · 2 usage · 3 not found · 4 rejected by the service · 5 unavailable or timed out · 6 denied",
    "            7 a followed run or job failed · 8 a download failed or did not match its sha256 · 9 sync now: every feed was skipped",
    'with --json, an error is one JSON document on stderr: {"error":{"exitCode":…,"code":…,"message":…}}',
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
    const [group, action, sub] = argv;
    if (group === undefined || group === "help" || group === "--help" || group === "-h") {
      io.out.write(help());
      return group === undefined ? EXIT.USAGE : EXIT.OK;
    }
    // Three-word commands first, so "billing jobs create" is not read as "billing jobs" + a positional.
    const three = COMMANDS[`${group} ${action ?? ""} ${sub ?? ""}`];
    const command = three ?? COMMANDS[`${group} ${action ?? ""}`];
    if (!command)
      throw new UsageError(
        `unknown command "${[group, action, sub].filter((w) => w && !w.startsWith("-")).join(" ")}"; \`malha help\` lists them`,
      );
    let parsed: ReturnType<typeof parseArgs>;
    try {
      parsed = parseArgs({
        args: argv.slice(three ? 3 : 2),
        options: { ...GLOBAL, ...command.options },
        allowPositionals: true,
        strict: true,
      });
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
    const urls = Object.fromEntries(
      SERVICES.flatMap((s) => (typeof values[`${s}-url`] === "string" ? [[s, values[`${s}-url`] as string]] : [])),
    );
    targets = new Targets({ urls, env: io.env, timeoutMs: timeout * 1000 });
    await command.run({ io, targets, values, positionals, json: values.json === true });
    return EXIT.OK;
  } catch (err) {
    const code = exitCodeOf(err);
    const message = err instanceof ConnectError ? err.message : (err as Error).message;
    // Decided from the raw words, so a --json run whose arguments did not even parse still answers in JSON.
    if (argv.includes("--json")) write(io.err, json({ error: errorDocument(err, code) }));
    else write(io.err, `malha: ${message}`);
    return code;
  } finally {
    targets?.close();
  }
}

/** What a script reads from a failed --json run: the exit code, a stable code word, the message. */
function errorDocument(err: unknown, exitCode: number): { exitCode: number; code: string; message: string } {
  if (err instanceof ConnectError)
    return { exitCode, code: Code[err.code].replace(/(?<!^)([A-Z])/g, "_$1").toLowerCase(), message: err.rawMessage };
  const code =
    err instanceof UsageError
      ? "usage"
      : err instanceof CliFailure
        ? (Object.entries(EXIT)
            .find(([, v]) => v === exitCode)?.[0]
            .toLowerCase() ?? "failure")
        : "error";
  return { exitCode, code, message: (err as Error).message };
}
