// Item ids (seed 003): external_id, else seu_numero, else numero_documento, else the 1-based position.
// The id names the item's PDF inside the zip and in artifact names, so it must be a safe path segment.
import type { Boleto } from "../../../libs/gen/malha/billing/v1/boleto_pb.js";

export const ITEM_ID = /^[A-Za-z0-9._-]{1,64}$/;
const DOT_ONLY = /^\.+$/;

export const isSafeItemId = (id: string) => ITEM_ID.test(id) && !DOT_ONLY.test(id);

export interface AssignedItem {
  position: number;
  itemId: string;
  /** Set when the item is refused before any worker sees it (invalid or repeated id). */
  preError?: { code: string; field: string; message: string };
  skipped: boolean;
}

/** Ids for every item, in order; the second and later items with an id already seen are SKIPPED. */
export function assignItemIds(items: readonly Boleto[]): AssignedItem[] {
  const seen = new Set<string>();
  return items.map((b, i) => {
    const position = i + 1;
    let itemId: string;
    let preError: AssignedItem["preError"];
    if (b.externalId !== "") {
      if (isSafeItemId(b.externalId)) itemId = b.externalId;
      else {
        itemId = String(position);
        preError = { code: "EXTERNAL_ID_INVALIDO", field: "external_id", message: "external_id must be 1-64 of [A-Za-z0-9._-]" };
      }
    } else {
      // A fallback that is not a safe segment is passed over rather than rewritten: rewriting could collide.
      itemId = [b.seuNumero, b.numeroDocumento].find((v) => v !== "" && isSafeItemId(v)) ?? String(position);
    }
    if (seen.has(itemId)) {
      return {
        position,
        itemId,
        skipped: true,
        preError: { code: "ITEM_DUPLICADO", field: "external_id", message: `item id ${itemId} repeats an earlier item` },
      };
    }
    seen.add(itemId);
    return { position, itemId, skipped: false, ...(preError ? { preError } : {}) };
  });
}
