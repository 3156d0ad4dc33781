// Runs in a store decode thread: one page of entries per message, answered with its rows. The byte
// columns (XML, documento_pb, payloads) are moved to the event loop's thread, not copied.
import type { Transferable } from "node:worker_threads";
import { PageTooLargeError } from "../../../libs/adn/decode-page.js";
import { useNodeTextEncoding } from "../../../libs/rpc/text-encoding.js";
import { serveTasks } from "../../../libs/worker-pool/index.js";
import { isRendered } from "../sql/multi-insert.js";
import type { ItemRow } from "./item-rows.js";
import { pageRows } from "./page-rows.js";

/** Why a page could not be turned into rows: too large (with the entry that crossed the cap), or a bug. */
export type PageRowsFailure = { tooLarge: { nsu: string; limit: number } } | { message: string };

/**
 * The buffer of the written rows moved, and each byte column of a quarantine row with its own buffer. A view
 * into a larger buffer (a Buffer pool, a shared inflate buffer) is first copied out: cloning a view would
 * copy the whole buffer under it.
 */
function transfers(rows: ItemRow[]): Transferable[] {
  const moved = new Set<ArrayBuffer>();
  for (const row of rows) {
    const values = row.values;
    if (isRendered(values)) {
      moved.add(values.bytes.buffer as ArrayBuffer);
      continue;
    }
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (!(v instanceof Uint8Array)) continue;
      const own = v.byteOffset === 0 && v.byteLength === v.buffer.byteLength && !moved.has(v.buffer as ArrayBuffer);
      const bytes = own ? v : new Uint8Array(v);
      values[i] = bytes;
      moved.add(bytes.buffer as ArrayBuffer);
    }
  }
  return [...moved];
}

// A thread is an isolate of its own: runService's setting (0007) does not reach it, and the rows' documento_pb
// and evento_pb are where the store serializes most strings (itemRow 46 → 22 µs per item with it).
useNodeTextEncoding();

serveTasks(
  pageRows,
  (err): PageRowsFailure =>
    err instanceof PageTooLargeError
      ? { tooLarge: { nsu: err.nsu.toString(), limit: err.limit } }
      : { message: (err as Error)?.stack ?? String(err) },
  transfers,
);
