// The browser side of the console's JSON API (services/console/http.ts).
import { CSRF_HEADER, type ApiError, type FeedsResponse, type Me, type SyncResponse } from "../api-types.js";

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

export const api = {
  me: () => call<Me>("GET", "/api/me"),
  signIn: (user: string, token: string) => call<Me>("POST", "/api/session", { user, token }),
  signOut: () => call<object>("POST", "/api/session/end"),
  feeds: () => call<FeedsResponse>("GET", "/api/feeds"),
  syncAll: () => call<SyncResponse>("POST", "/api/sync-all"),
  syncNow: (ibge: string) => call<SyncResponse>("POST", `/api/municipios/${encodeURIComponent(ibge)}/sync`),
};
