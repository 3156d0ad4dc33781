// When each municipality's active certificate expires, for the Sincronização page's certificate column. The
// coordinator only says whether one is active; the vault knows the dates. Read at most once per `ttlMs`
// (every open tab refreshes every 2 s, certificates change when someone imports one).
import type { Client } from "@connectrpc/connect";
import { timestampDate } from "@bufbuild/protobuf/wkt";
import { CertificateStatus, type VaultService } from "../../libs/gen/malha/vault/v1/vault_pb.js";

const MAX_PAGES = 50;

export interface CertificateExpiry {
  /** ibge → the latest expiry among its active certificates (ISO); a vault that does not answer yields the last good map. */
  byIbge(): Promise<ReadonlyMap<string, string>>;
}

export function createCertificateExpiry(vault: Client<typeof VaultService>, ttlMs = 60_000, now = Date.now): CertificateExpiry {
  let cached: { at: number; map: Map<string, string> } | undefined;
  let loading: Promise<void> | undefined;

  async function load(): Promise<void> {
    const map = new Map<string, string>();
    let pageToken = "";
    for (let i = 0; i < MAX_PAGES; i++) {
      const page = await vault.listCertificates({ status: CertificateStatus.ACTIVE, pageSize: 500, pageToken });
      for (const c of page.certificates) {
        if (!c.notAfter) continue;
        const at = timestampDate(c.notAfter).toISOString();
        // During a rotation two may be active: the feed keeps working until the later one expires.
        if ((map.get(c.ibge) ?? "") < at) map.set(c.ibge, at);
      }
      pageToken = page.nextPageToken;
      if (!pageToken) break;
    }
    cached = { at: now(), map };
  }

  return {
    async byIbge() {
      if (!cached || now() - cached.at >= ttlMs) {
        loading ??= load().finally(() => {
          loading = undefined;
        });
        try {
          await loading;
        } catch {
          // Dates are an aid: without the vault the page still shows the coordinator's yes/no.
          if (!cached) return new Map();
        }
      }
      return cached!.map;
    },
  };
}
