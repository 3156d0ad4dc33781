// The browser side of the console's JSON API (services/console/http.ts and routes/).
import {
  CSRF_HEADER,
  type ApiError,
  type CancelResponse,
  type CertificatesResponse,
  type DocumentDetail,
  type DocumentsResponse,
  type FeedPage,
  type FeedsPage,
  type FeedView,
  type ImportCertificateResult,
  type Me,
  type MunicipiosResponse,
  type SyncResponse,
} from "../api-types.js";

export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

export async function call<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
  const res = await fetch(path, {
    method,
    credentials: "same-origin",
    headers: { Accept: "application/json", ...(method === "POST" ? { [CSRF_HEADER]: "1", "Content-Type": "application/json" } : {}) },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const data = (await res.json().catch(() => ({}))) as T | ApiError;
  if (!res.ok) {
    const err = (data as ApiError).error;
    throw new ApiFailure(res.status, err?.code ?? "HTTP", err?.message ?? `HTTP ${res.status}`);
  }
  return data as T;
}

/** `?a=1&b=2` from the set values only. */
export function queryString(params: Record<string, string | undefined>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v) q.set(k, v);
  const s = q.toString();
  return s ? `?${s}` : "";
}

const enc = encodeURIComponent;
const feedBase = (f: Pick<FeedView, "ibge" | "ambiente" | "tipoNsu">) => `/api/feeds/${enc(f.ibge)}/${enc(f.ambiente)}/${enc(f.tipoNsu)}`;

export const api = {
  me: () => call<Me>("GET", "/api/me"),
  signIn: (user: string, token: string) => call<Me>("POST", "/api/session", { user, token }),
  signOut: () => call<object>("POST", "/api/session/end"),
  feeds: (filter: { q?: string; uf?: string; state?: string; pageToken?: string }) =>
    call<FeedsPage>("GET", `/api/feeds${queryString(filter)}`),
  municipios: () => call<MunicipiosResponse>("GET", "/api/municipios"),
  syncAll: () => call<SyncResponse>("POST", "/api/sync-all"),
  syncNow: (ibge: string) => call<SyncResponse>("POST", `/api/municipios/${enc(ibge)}/sync`),
  cancel: (f: Pick<FeedView, "ibge" | "ambiente" | "tipoNsu">) => call<CancelResponse>("POST", `${feedBase(f)}/cancel`),
  feed: (f: Pick<FeedView, "ibge" | "ambiente" | "tipoNsu">) => call<FeedPage>("GET", feedBase(f)),
  quarantineUrl: (f: Pick<FeedView, "ibge" | "ambiente" | "tipoNsu">, nsu: string, id: string) =>
    `${feedBase(f)}/quarentena/${enc(nsu)}/${enc(id)}`,
  documents: (ibge: string, filter: Record<string, string | undefined>) =>
    call<DocumentsResponse>("GET", `/api/municipios/${enc(ibge)}/documentos${queryString(filter)}`),
  document: (ibge: string, chave: string) => call<DocumentDetail>("GET", `/api/municipios/${enc(ibge)}/documentos/${enc(chave)}`),
  documentXmlUrl: (ibge: string, chave: string) => `/api/municipios/${enc(ibge)}/documentos/${enc(chave)}/xml`,
  eventXmlUrl: (ibge: string, chave: string, id: string) => `/api/municipios/${enc(ibge)}/documentos/${enc(chave)}/eventos/${enc(id)}/xml`,
  certificates: (ibge: string) => call<CertificatesResponse>("GET", `/api/municipios/${enc(ibge)}/certificados`),
  importCertificate: (ibge: string, pfxBase64: string, password: string) =>
    call<ImportCertificateResult>("POST", `/api/municipios/${enc(ibge)}/certificados`, { pfxBase64, password }),
};
