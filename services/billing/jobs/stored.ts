// The documents the job tables keep in their TEXT columns, and how each is read back. Writers
// serialise these types with JSON.stringify; readers go through the decoders below, so a column's shape
// is written down once.
import type { Environment } from "../../../libs/gen/malha/billing/v1/types_pb.js";
import { Doc } from "./json-doc.js";

export interface StoredError {
  code: string;
  field: string;
  message: string;
  retryable: boolean;
}

/** Artifact references of a job, as stored on its rows. */
export interface StoredArtifact {
  artifactId: string;
  name: string;
  contentType: string;
  sizeBytes: number;
  sha256: string;
}

export interface StoredResult {
  nossoNumero: string;
  nossoNumeroDv: string;
  nossoNumeroFormatado: string;
  linhaDigitavel: string;
  linhaDigitavelFormatada: string;
  codigoBarras: string;
  pixPayload: string;
  pdf?: StoredArtifact;
}

/** The consolidated artifacts of a finished round. */
export interface StoredManifest {
  zip?: StoredArtifact;
  manifestJson: StoredArtifact;
  errorsJson: StoredArtifact;
}

/** billing_jobs.metadata: the JobMetadata message in its JSON form (copied into manifest.json as is). */
export interface StoredJobMetadata {
  templateVersion: string;
  bankRulesVersion: string;
  banco: string;
  carteira: string;
  convenio: string;
  tenant: string;
  requestedBy: string;
  environment: Environment;
}

export const errorOf = (d: Doc): StoredError => ({
  code: d.str("code"),
  field: d.str("field"),
  message: d.str("message"),
  retryable: d.bool("retryable"),
});

export const storedErrorsOf = (text: string | null, column: string): StoredError[] => (text ? Doc.list(text, column, errorOf) : []);

export const artifactOf = (d: Doc): StoredArtifact => ({
  artifactId: d.str("artifactId"),
  name: d.str("name"),
  contentType: d.str("contentType"),
  sizeBytes: d.num("sizeBytes"),
  sha256: d.str("sha256"),
});

export function resultOf(text: string | null, column: string): StoredResult | null {
  if (!text) return null;
  const d = Doc.parse(text, column);
  const pdf = d.optDoc("pdf");
  return {
    nossoNumero: d.str("nossoNumero"),
    nossoNumeroDv: d.str("nossoNumeroDv"),
    nossoNumeroFormatado: d.str("nossoNumeroFormatado"),
    linhaDigitavel: d.str("linhaDigitavel"),
    linhaDigitavelFormatada: d.str("linhaDigitavelFormatada"),
    codigoBarras: d.str("codigoBarras"),
    pixPayload: d.str("pixPayload"),
    ...(pdf ? { pdf: artifactOf(pdf) } : {}),
  };
}

export function manifestOf(text: string | null): StoredManifest | null {
  if (!text) return null;
  const d = Doc.parse(text, "billing_jobs.manifest");
  const zip = d.optDoc("zip");
  return {
    ...(zip ? { zip: artifactOf(zip) } : {}),
    manifestJson: artifactOf(d.doc("manifestJson")),
    errorsJson: artifactOf(d.doc("errorsJson")),
  };
}

export function metadataOf(text: string): StoredJobMetadata {
  const d = Doc.parse(text, "billing_jobs.metadata");
  // Key order as written at creation: manifest.json repeats this object, and its bytes must not change.
  return {
    templateVersion: d.str("templateVersion"),
    bankRulesVersion: d.str("bankRulesVersion"),
    banco: d.str("banco"),
    carteira: d.str("carteira"),
    convenio: d.str("convenio"),
    tenant: d.str("tenant"),
    requestedBy: d.str("requestedBy"),
    environment: d.num("environment"),
  };
}
