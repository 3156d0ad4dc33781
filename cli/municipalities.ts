import { Ambiente, TipoNsu } from "../libs/gen/malha/nfse/v1/feed_pb.js";
import type { Municipality } from "../libs/gen/malha/store/v1/types_pb.js";
import { StoreService } from "../libs/gen/malha/store/v1/store_pb.js";
import { str, type Command } from "./command.js";
import { UsageError } from "./exit-codes.js";
import { enumName, iso, json, parseEnum } from "./format.js";
import { write } from "./io.js";
import { table } from "./table.js";

/** `producao-restrita:distribuicao` → a FeedSpec. */
function feedSpec(text: string): { ambiente: Ambiente; tipoNsu: TipoNsu } {
  const [ambiente = "", tipo = ""] = text.split(":");
  try {
    return { ambiente: parseEnum(Ambiente, ambiente, "ambiente"), tipoNsu: parseEnum(TipoNsu, tipo, "tipo-nsu") };
  } catch (err) {
    throw new UsageError(`--feed ${text}: ${(err as Error).message} (e.g. producao:distribuicao)`);
  }
}

function feeds(m: Municipality): string {
  return (
    m.feeds
      .map(
        (f) => `${enumName(Ambiente, f.ambiente).toLowerCase()}:${enumName(TipoNsu, f.tipoNsu).toLowerCase()}${f.enabled ? "" : " (off)"}`,
      )
      .join(", ") || "-"
  );
}

function plain(m: Municipality) {
  return {
    ibge: m.ibge,
    name: m.name,
    uf: m.uf,
    active: m.active,
    feeds: m.feeds.map((f) => ({ ambiente: enumName(Ambiente, f.ambiente), tipoNsu: enumName(TipoNsu, f.tipoNsu), enabled: f.enabled })),
    createdAt: iso(m.createdAt),
  };
}

export const municipalitiesAdd: Command = {
  usage: "municipalities add <ibge> --name <name> --uf <UF> [--feed <ambiente>:<tipo-nsu>]… [--inactive]",
  summary: "register a municipality and its feeds (default feed: producao:distribuicao)",
  options: { name: { type: "string" }, uf: { type: "string" }, feed: { type: "string", multiple: true }, inactive: { type: "boolean" } },
  positionals: [1, 1],
  async run({ io, targets, values, positionals, json: asJson }) {
    const name = str(values, "name");
    const uf = str(values, "uf");
    if (!name || !uf) throw new UsageError("--name and --uf are required");
    const specs = (values.feed as string[] | undefined) ?? ["producao:distribuicao"];
    const store = targets.client("store", StoreService);
    const res = await store.registerMunicipality({
      ibge: positionals[0]!,
      name,
      uf: uf.toUpperCase(),
      active: values.inactive !== true,
      feeds: specs.map(feedSpec),
    });
    const m = res.municipality!;
    if (asJson) write(io.out, json({ ...plain(m), created: res.created }));
    else write(io.out, `${res.created ? "registered" : "already registered"}: ${m.ibge} ${m.name}/${m.uf}, feeds ${feeds(m)}`);
  },
};

export const municipalitiesList: Command = {
  usage: "municipalities list [--uf <UF>] [--active | --inactive]",
  summary: "list registered municipalities and their feeds",
  options: { uf: { type: "string" }, active: { type: "boolean" }, inactive: { type: "boolean" } },
  async run({ io, targets, values, json: asJson }) {
    if (values.active && values.inactive) throw new UsageError("--active and --inactive exclude each other");
    const store = targets.client("store", StoreService);
    const all: Municipality[] = [];
    let pageToken = "";
    do {
      const res = await store.listMunicipalities({
        uf: (str(values, "uf") ?? "").toUpperCase(),
        ...(values.active ? { active: true } : values.inactive ? { active: false } : {}),
        pageSize: 500,
        pageToken,
      });
      all.push(...res.municipalities);
      pageToken = res.nextPageToken;
    } while (pageToken);
    if (asJson) write(io.out, json(all.map(plain)));
    else
      io.out.write(
        table(
          ["ibge", "name", "uf", "active", "feeds"],
          all.map((m) => [m.ibge, m.name, m.uf, m.active ? "yes" : "no", feeds(m)]),
        ),
      );
  },
};
