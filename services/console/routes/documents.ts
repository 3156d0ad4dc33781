// "Documentos": search a municipality's notes, one note with its events, and the stored XML.
import type { DocumentStatusName } from "../api-types.js";
import type { DocumentSearch, DocumentsView } from "../documents-view.js";
import { attachment, badRequest, json, requireIbge } from "../http-kit.js";
import { get, type Route } from "../router.js";

const BASE = String.raw`\/api\/municipios\/([^/]+)\/documentos`;

function param(query: URLSearchParams, name: string, max = 100): string | undefined {
  const v = query.get(name)?.trim();
  if (v === undefined || v === "") return undefined;
  if (v.length > max) throw badRequest(`${name} is longer than ${max} characters`);
  return v;
}

export function documentRoutes(view: DocumentsView): Route[] {
  return [
    get(new RegExp(`^${BASE}$`), async ({ res, params, query }) => {
      const ibge = requireIbge(params[0]!);
      const s: DocumentSearch = { ibge };
      for (const key of ["chave", "from", "to", "prestador", "tomador"] as const) {
        const v = param(query, key);
        if (v !== undefined) s[key] = v;
      }
      const status = param(query, "status");
      if (status !== undefined) s.status = status as DocumentStatusName;
      const pageToken = param(query, "pageToken", 2048);
      if (pageToken !== undefined) s.pageToken = pageToken;
      json(res, 200, await view.search(s));
    }),
    get(new RegExp(`^${BASE}\\/([0-9]{50})$`), async ({ res, params }) => {
      json(res, 200, await view.get(requireIbge(params[0]!), params[1]!));
    }),
    get(new RegExp(`^${BASE}\\/([0-9]{50})\\/xml$`), async ({ res, params, op, log }) => {
      const ibge = requireIbge(params[0]!);
      const file = await view.xml(ibge, params[1]!);
      log.info({ actor: op.user, action: "download-xml", ibge, chave: params[1] }, "console download");
      attachment(res, file.body, file.filename, "application/xml");
    }),
    get(new RegExp(`^${BASE}\\/([0-9]{50})\\/eventos\\/([A-Za-z0-9]{1,80})\\/xml$`), async ({ res, params, op, log }) => {
      const ibge = requireIbge(params[0]!);
      const file = await view.xml(ibge, params[1]!, params[2]!);
      log.info({ actor: op.user, action: "download-xml", ibge, chave: params[1], event: params[2] }, "console download");
      attachment(res, file.body, file.filename, "application/xml");
    }),
  ];
}
