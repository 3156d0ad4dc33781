// Names and UFs of the registered municipalities, read from the store at most once per `ttlMs`: every page
// shows them, and searching by name or UF needs them, but they change only when someone registers one.
import type { Client } from "@connectrpc/connect";
import type { StoreService } from "../../libs/gen/malha/store/v1/store_pb.js";
import type { MunicipioView } from "./api-types.js";

const MAX_PAGES = 200;

export interface MunicipioDirectory {
  /** Every registered municipality, by ibge; a store that does not answer yields the last good list. */
  list(): Promise<MunicipioView[]>;
  get(ibge: string): Promise<MunicipioView | undefined>;
}

export function createMunicipioDirectory(store: Client<typeof StoreService>, ttlMs = 30_000, now = Date.now): MunicipioDirectory {
  let cached: { at: number; list: MunicipioView[]; byIbge: Map<string, MunicipioView> } | undefined;
  let loading: Promise<void> | undefined;

  async function load(): Promise<void> {
    const list: MunicipioView[] = [];
    let pageToken = "";
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await store.listMunicipalities({ pageSize: 500, pageToken });
      for (const m of page.municipalities) list.push({ ibge: m.ibge, name: m.name, uf: m.uf, active: m.active });
      if (!page.nextPageToken) break;
      pageToken = page.nextPageToken;
    }
    list.sort((a, b) => a.ibge.localeCompare(b.ibge));
    cached = { at: now(), list, byIbge: new Map(list.map((m) => [m.ibge, m])) };
  }

  async function fresh() {
    if (!cached || now() - cached.at >= ttlMs) {
      loading ??= load().finally(() => {
        loading = undefined;
      });
      try {
        await loading;
      } catch {
        // Names are decoration: keep serving the last list (or none) rather than failing the page.
        if (!cached) return { list: [], byIbge: new Map<string, MunicipioView>() };
      }
    }
    return cached!;
  }

  return {
    list: async () => (await fresh()).list,
    get: async (ibge) => (await fresh()).byIbge.get(ibge),
  };
}

/** Case- and accent-insensitive, so "sao paulo" finds "São Paulo". */
export const fold = (s: string): string =>
  s
    .normalize("NFD")
    .replace(/\p{Diacritic}/gu, "")
    .toLocaleLowerCase("pt-BR");
