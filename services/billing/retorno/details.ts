// billing_jobs.details of a retorno job: the file as received (name, sha256, size, hints) and, once
// parsed, its header, per-state summary and issues.
import type { CalendarDate } from "../../../libs/cobranca/index.js";
import { Doc } from "../jobs/json-doc.js";

export interface RetornoSummary {
  state: number;
  count: number;
  valorPagoCents: number;
  valorLiquidoCents: number;
}

export interface RetornoIssue {
  lineNumber: number;
  severity: number;
  code: string;
  message: string;
}

export interface RetornoDetails {
  fileName: string;
  fileSha256: string;
  fileSizeBytes: number;
  fileArtifactId: string;
  bancoHint: string;
  layoutHint: number;
  banco?: string;
  layout?: number;
  convenio?: string;
  nsa?: number;
  dataGeracao?: CalendarDate;
  occurrencesTotal?: number;
  duplicates?: number;
  summary?: RetornoSummary[];
  issues?: RetornoIssue[];
}

const dateOf = (d: Doc): CalendarDate => ({ year: d.num("year"), month: d.num("month"), day: d.num("day") });

export function retornoDetailsOf(text: string | null): RetornoDetails {
  if (!text) throw new Error("a retorno job without its details");
  const d = Doc.parse(text, "billing_jobs.details");
  const opt = <T>(k: string, read: (k: string) => T): { [key: string]: T } => (d.has(k) ? { [k]: read(k) } : {});
  return {
    fileName: d.str("fileName"),
    fileSha256: d.str("fileSha256"),
    fileSizeBytes: d.num("fileSizeBytes"),
    fileArtifactId: d.str("fileArtifactId"),
    bancoHint: d.str("bancoHint"),
    layoutHint: d.num("layoutHint"),
    ...opt("banco", (k) => d.str(k)),
    ...opt("layout", (k) => d.num(k)),
    ...opt("convenio", (k) => d.str(k)),
    ...opt("nsa", (k) => d.num(k)),
    ...opt("dataGeracao", (k) => dateOf(d.doc(k))),
    ...opt("occurrencesTotal", (k) => d.num(k)),
    ...opt("duplicates", (k) => d.num(k)),
    ...opt("summary", (k) =>
      d.list(k, (s) => ({
        state: s.num("state"),
        count: s.num("count"),
        valorPagoCents: s.num("valorPagoCents"),
        valorLiquidoCents: s.num("valorLiquidoCents"),
      })),
    ),
    ...opt("issues", (k) =>
      d.list(k, (i) => ({ lineNumber: i.num("lineNumber"), severity: i.num("severity"), code: i.str("code"), message: i.str("message") })),
    ),
  };
}
