// `documents danfse`: the DANFSe of one note (streamed from the danfse service into --out), or of many
// (--from/--to competência, or --chaves) as an export the CLI follows, showing its progress, and whose
// zip it downloads through the signed link, keeping it only if sha256 and size match.
import { createHash } from "node:crypto";
import { closeSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { type DanfseExport, DanfseExportState, DanfseService } from "../libs/gen/malha/danfse/v1/danfse_pb.js";
import { downloadVerified } from "./billing-download.js";
import { str, type Command, type Context } from "./command.js";
import { CliFailure, EXIT, UsageError } from "./exit-codes.js";
import { enumName, iso, json } from "./format.js";
import { write } from "./io.js";

function date(value: string | undefined, option: string): { year: number; month: number; day: number } | undefined {
  if (value === undefined) return undefined;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value);
  if (!m) throw new UsageError(`--${option} must be a date YYYY-MM-DD, got ${JSON.stringify(value)}`);
  return { year: Number(m[1]), month: Number(m[2]), day: Number(m[3]) };
}

const progress = (e: DanfseExport) =>
  `export ${e.id}: ${enumName(DanfseExportState, e.state)} ${e.rendered + e.failed}/${e.total} (${e.rendered} rendered, ${e.failed} failed)`;

async function single(ctx: Context, ibge: string, chave: string, out: string): Promise<void> {
  const danfse = ctx.targets.client("danfse", DanfseService);
  const tmp = `${out}.part-${process.pid}`;
  const fd = openSync(tmp, "w", 0o644);
  const hash = createHash("sha256");
  let bytes = 0;
  let header: { sizeBytes: bigint; sha256: string } | undefined;
  try {
    for await (const res of danfse.getDanfse({ ibge, chave })) {
      if (res.part.case === "header") header = res.part.value;
      else if (res.part.case === "chunk") {
        writeSync(fd, res.part.value);
        hash.update(res.part.value);
        bytes += res.part.value.length;
      }
    }
    closeSync(fd);
    const sha256 = hash.digest("hex");
    if (!header || header.sha256 !== sha256 || header.sizeBytes !== BigInt(bytes))
      throw new CliFailure(
        `the PDF received does not match its header (sha256 ${sha256}, ${bytes} bytes); nothing kept`,
        EXIT.DOWNLOAD_FAILED,
      );
    renameSync(tmp, out);
    if (ctx.json) write(ctx.io.out, json({ chave, path: out, bytes, sha256 }));
    else write(ctx.io.out, `${out}: DANFSe of ${chave}, ${bytes} bytes, sha256 ${sha256}`);
  } catch (err) {
    try {
      closeSync(fd);
    } catch {
      // already closed
    }
    rmSync(tmp, { force: true });
    throw err;
  }
}

async function bulk(ctx: Context, ibge: string, out: string): Promise<void> {
  const from = date(str(ctx.values, "from"), "from");
  const to = date(str(ctx.values, "to"), "to");
  const chaves = (str(ctx.values, "chaves") ?? "")
    .split(",")
    .map((c) => c.trim())
    .filter(Boolean);
  if ((from || to) && chaves.length) throw new UsageError("give --from/--to or --chaves, not both");
  if (!chaves.length && !(from && to)) throw new UsageError("an export needs --from and --to (competência, inclusive) or --chaves");
  const interval = Number(str(ctx.values, "interval") ?? "1");
  if (!(interval > 0)) throw new UsageError("--interval must be a positive number of seconds");
  const danfse = ctx.targets.client("danfse", DanfseService);
  const created = await danfse.createDanfseExport({
    ibge,
    ...(chaves.length ? { chaves } : { competenciaRange: { start: from, end: to } }),
  });
  let e = created.export!;
  let last = "";
  const show = () => {
    const line = progress(e);
    if (line === last) return;
    last = line;
    if (ctx.json)
      write(
        ctx.io.out,
        json({ exportId: e.id, state: enumName(DanfseExportState, e.state), total: e.total, rendered: e.rendered, failed: e.failed }),
      );
    else write(ctx.io.out, line);
  };
  show();
  while (e.state === DanfseExportState.RUNNING) {
    await ctx.io.sleep(interval * 1000);
    e = (await danfse.getDanfseExport({ exportId: e.id })).export!;
    show();
  }
  if (e.state !== DanfseExportState.COMPLETED || !e.zip) throw new CliFailure(`export ${e.id} failed: ${e.error}`, EXIT.RUN_FAILED);
  const got = await downloadVerified(e.zip, out, ctx.targets.timeoutMs);
  if (ctx.json)
    write(
      ctx.io.out,
      json({
        exportId: e.id,
        path: got.path,
        bytes: got.bytes,
        sha256: got.sha256,
        rendered: e.rendered,
        failed: e.failed,
        expiresAt: iso(e.zip.expiresAt),
      }),
    );
  else
    write(
      ctx.io.out,
      `${got.path}: ${got.bytes} bytes, sha256 ${got.sha256} (verified), ${e.rendered} DANFSe${e.failed ? `, ${e.failed} notes failed (see manifest.json)` : ""}`,
    );
}

export const documentsDanfse: Command = {
  usage: "documents danfse <ibge> [<chave>] --out <file> [--from <YYYY-MM-DD> --to <YYYY-MM-DD> | --chaves <c1,c2,…>] [--interval <s>]",
  summary:
    "the DANFSe PDF of one note to --out; without <chave>, an export of the competência range or chaves, with progress, downloaded as a zip (PDFs + manifest.json) to --out",
  options: {
    out: { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    chaves: { type: "string" },
    interval: { type: "string" },
  },
  positionals: [1, 2],
  async run(ctx) {
    const out = str(ctx.values, "out");
    if (!out) throw new UsageError("--out <file> is required");
    const [ibge, chave] = ctx.positionals as [string, string | undefined];
    if (chave !== undefined) {
      if (str(ctx.values, "from") || str(ctx.values, "to") || str(ctx.values, "chaves"))
        throw new UsageError("a single note takes no --from/--to/--chaves");
      return single(ctx, ibge, chave, out);
    }
    return bulk(ctx, ibge, out);
  },
};
